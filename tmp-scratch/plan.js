const Database = require('better-sqlite3');
const db = new Database(process.argv[2], { readonly: true });
const sql = process.argv[3]; const args = JSON.parse(process.argv[4] || '[]');
console.log(db.prepare('EXPLAIN QUERY PLAN ' + sql).all(...args).map(r => r.detail).join('\n'));
