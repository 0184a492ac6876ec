/** `--name=value` / `--name value` / `--flag` parsing for the inference commands. */
export class ArgsError extends Error {}

export function parseFlags(argv: string[], known: { values: string[]; booleans: string[] }): Map<string, string> {
  const out = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '-h' || arg === '--help') {
      out.set('help', 'true');
      continue;
    }
    if (!arg.startsWith('--')) throw new ArgsError(`unexpected argument "${arg}"`);
    const eq = arg.indexOf('=');
    const name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
    if (known.booleans.includes(name)) {
      const v = eq < 0 ? 'true' : arg.slice(eq + 1);
      if (v !== 'true' && v !== 'false') throw new ArgsError(`--${name} takes true or false, got "${v}"`);
      out.set(name, v);
      continue;
    }
    if (!known.values.includes(name)) throw new ArgsError(`unknown option --${name}`);
    if (eq >= 0) out.set(name, arg.slice(eq + 1));
    else {
      const next = argv[i + 1];
      if (next === undefined || next.startsWith('--')) throw new ArgsError(`--${name} needs a value`);
      out.set(name, next);
      i++;
    }
  }
  return out;
}
