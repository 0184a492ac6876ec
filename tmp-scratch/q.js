const Database = require('better-sqlite3');
const db = new Database(process.argv[2], { readonly: true });
const cols = db.prepare('PRAGMA table_info("Repository")').all().map(c => `r."${c.name}"`).join(',');
const ucols = db.prepare('PRAGMA table_info("User")').all().map(c => `u."${c.name}"`).join(',');
const qs = {
  page: `SELECT ${cols} FROM Repository r LEFT JOIN User j0 ON j0.id = r.ownerId WHERE (r.isPrivate = ? AND (j0.visibility IN (?) AND (j0.id IS NOT NULL)) AND r.isPrivate = ?) ORDER BY r.lowerName ASC, r.id ASC LIMIT ? OFFSET ?`,
  count: `SELECT COUNT(*) AS c FROM (SELECT r.id FROM Repository r LEFT JOIN User j0 ON j0.id = r.ownerId WHERE (r.isPrivate = ? AND (j0.visibility IN (?) AND (j0.id IS NOT NULL)) AND r.isPrivate = ?) LIMIT ? OFFSET ?) AS sub`,
  users: `SELECT ${ucols} FROM User u WHERE u.id IN (${Array(50).fill('?').join(',')}) LIMIT ? OFFSET ?`,
  count2: `SELECT COUNT(*) AS c FROM Repository r WHERE r.isPrivate = ? AND r.ownerId IN (SELECT id FROM User WHERE visibility IN (?))`,
  pagejoin: `SELECT ${cols},${ucols} FROM Repository r JOIN User u ON u.id = r.ownerId WHERE r.isPrivate = ? AND u.visibility IN (?) ORDER BY r.lowerName ASC, r.id ASC LIMIT ? OFFSET ?`,
};
const args = { page: [0,0,0,50,0], count: [0,0,0,-1,0], users: [...Array(50).keys(), -1, 0], count2: [0,0], pagejoin: [0,0,50,0] };
for (const [k, sql] of Object.entries(qs)) {
  const N = 300;
  let t = process.cpuUsage();
  for (let i = 0; i < N; i++) db.prepare(sql);
  const prep = (process.cpuUsage(t).user) / 1e3 / N;
  const st = db.prepare(sql);
  t = process.cpuUsage();
  for (let i = 0; i < N; i++) st.all(...args[k]);
  console.log(k, 'prepare', prep.toFixed(3), 'run', (process.cpuUsage(t).user / 1e3 / N).toFixed(3), 'ms');
}
