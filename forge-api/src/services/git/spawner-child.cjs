/*
 * The small helper process services/git/spawner.ts starts once: it forks git for the forge.
 * Forking from the forge itself copies the page tables of a ~300 MiB process for every git
 * command (and the child tears them down again); forking from this process, which holds next
 * to nothing, costs a fraction of that.
 *
 * Messages on the IPC channel:
 *   forge -> here: { op: 'spawn', id, args, env, cwd } with a socket handle: git's stdin and
 *                  stdout; its other end stays in the forge, so the data never passes here.
 *                  { op: 'kill', id, signal }
 *   here -> forge: { op: 'spawned', id } once git runs and this process let go of the socket
 *                  (the forge writes git's input only then, so none of it is read here);
 *                  { op: 'exit', id, code, signal, stderr } when git ended.
 * Plain JavaScript, so it starts without the TypeScript loader.
 */
'use strict';
const { spawn } = require('node:child_process');

const children = new Map();
const STDERR_KEEP = 8192;

process.on('message', (m, socket) => {
  if (!m || typeof m !== 'object') return;
  if (m.op === 'kill') {
    const child = children.get(m.id);
    if (child) child.kill(m.signal || 'SIGTERM');
    return;
  }
  if (m.op !== 'spawn') return;
  let child;
  try {
    child = spawn('git', m.args, { env: { ...process.env, ...m.env }, cwd: m.cwd, stdio: [socket, socket, 'pipe'] });
  } catch (err) {
    if (socket) socket.destroy();
    send({ op: 'exit', id: m.id, code: -1, signal: null, stderr: String(err && err.message) });
    return;
  }
  // git holds its own copy of the socket now; this process must not read from it.
  if (socket) socket.destroy();
  children.set(m.id, child);
  let stderr = '';
  let failed = null;
  child.stderr.on('data', (c) => {
    stderr = (stderr + c.toString('utf8')).slice(-STDERR_KEEP);
  });
  child.on('error', (err) => {
    failed = err;
  });
  child.on('close', (code, signal) => {
    children.delete(m.id);
    if (failed && code === null && signal === null) send({ op: 'exit', id: m.id, code: -1, signal: null, stderr: String(failed.message) });
    else send({ op: 'exit', id: m.id, code, signal, stderr });
  });
  send({ op: 'spawned', id: m.id, pid: child.pid });
});

function send(msg) {
  if (process.connected) process.send(msg);
}

// The forge went away: end with it (its git commands are of no use to anyone now).
process.on('disconnect', () => {
  for (const child of children.values()) child.kill('SIGTERM');
  process.exit(0);
});
