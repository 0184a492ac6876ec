import fs from 'node:fs';
import path from 'node:path';

/**
 * The license templates Gitea ships since 1.24 (28 SPDX identifiers). Texts come from the
 * SPDX license list (npm `spdx-license-list`, CC0) rather than a copy kept in this repository.
 */
const LICENSE_NAMES = [
  '0BSD', 'AGPL-3.0', 'Apache-2.0', 'BSD-2-Clause', 'BSD-3-Clause', 'BSD-3-Clause-Clear', 'BSL-1.0',
  'CC-BY-4.0', 'CC-BY-SA-4.0', 'CC0-1.0', 'EPL-1.0', 'EPL-2.0', 'EUPL-1.2', 'GPL-2.0', 'GPL-3.0', 'ISC',
  'LGPL-2.1', 'LGPL-3.0', 'MIT', 'MIT-0', 'MPL-2.0', 'MulanPSL-2.0', 'OFL-1.1', 'OSL-3.0', 'UPL-1.0',
  'Unlicense', 'WTFPL', 'Zlib',
] as const;

/** Where the package keeps one JSON file per license (the whole list, 5 MB of text, is only read for detection: git-data/licenses.ts). */
const LICENSE_DIR = path.join(path.dirname(require.resolve('spdx-license-list/package.json')), 'licenses');
const loaded = new Map<string, string | null>();

/** The SPDX text of one of LICENSE_NAMES (read once), or null when the package lacks it. */
function spdxText(name: (typeof LICENSE_NAMES)[number]): string | null {
  let text = loaded.get(name);
  if (text === undefined) {
    try {
      text = (JSON.parse(fs.readFileSync(path.join(LICENSE_DIR, `${name}.json`), 'utf8')) as { licenseText?: string }).licenseText || null;
    } catch {
      text = null;
    }
    loaded.set(name, text);
  }
  return text;
}

export function licenseNames(): string[] {
  return LICENSE_NAMES.filter((n) => spdxText(n));
}

/** The raw template text (placeholders unfilled), or null for an unknown name. */
export function licenseTemplate(name: string): string | null {
  if (!(LICENSE_NAMES as readonly string[]).includes(name)) return null;
  const text = spdxText(name as (typeof LICENSE_NAMES)[number]);
  if (!text) return null;
  return text.endsWith('\n') ? text : `${text}\n`;
}

export interface LicenseValues {
  year: string | number;
  owner: string;
  repo?: string;
  email?: string;
}

interface Placeholders {
  owner: string[];
  email: string[];
  repo: string[];
  year: string[];
  /** Only lines matching this are filled (for licenses whose placeholder words also occur as prose). */
  matchLine?: RegExp;
}

// The placeholder spellings used across the SPDX texts, as Gitea fills them.
const COMMON_PLACEHOLDERS: Placeholders = {
  owner: [
    '<name of author>', '<owner>', '[NAME]', '[name of copyright owner]', '[name of copyright holder]',
    '<COPYRIGHT HOLDERS>', '<copyright holders>', '<AUTHOR>', "<author's name or designee>",
    '[one or more legally recognised persons or entities offering the Work under the terms and conditions of this Licence]',
  ],
  email: ['[EMAIL]'],
  repo: ['<program>', "<one line to give the program's name and a brief idea of what it does.>"],
  year: ['<year>', '[YEAR]', '{YEAR}', '[yyyy]', '[Year]', '[year]'],
};

const SPECIAL_PLACEHOLDERS: Record<string, Placeholders> = {
  '0BSD': { owner: ['AUTHOR'], email: ['EMAIL'], repo: [], year: ['YEAR'], matchLine: /Copyright \(C\) YEAR by AUTHOR EMAIL/ },
};

/** License text with year, owner, email and repository filled in, or null for an unknown name. */
export function licenseText(name: string, values: LicenseValues): string | null {
  const template = licenseTemplate(name);
  if (template === null) return null;
  const ph = SPECIAL_PLACEHOLDERS[name] ?? COMMON_PLACEHOLDERS;
  const fill = (line: string, keys: string[], value: string) => keys.reduce((acc, k) => acc.split(k).join(value), line);
  const lines = template.replace(/\n$/, '').split('\n');
  return (
    lines
      .map((line) => {
        if (ph.matchLine && !ph.matchLine.test(line)) return line;
        let out = fill(line, ph.owner, values.owner);
        out = fill(out, ph.email, values.email ?? '');
        out = fill(out, ph.repo, values.repo ?? '');
        return fill(out, ph.year, String(values.year));
      })
      .join('\n') + '\n'
  );
}
