/**
 * Issue templates and the issue config of a repository, read from its default branch as
 * Gitea's ParseTemplatesFromDefaultBranch / GetTemplateConfigFromDefaultBranch do:
 * templates are the .md (front matter + body) and .yaml/.yml (issue forms) files directly in
 * the first-level folders ISSUE_TEMPLATE, .gitea/ISSUE_TEMPLATE, .github/ISSUE_TEMPLATE, ...
 * (config.yaml excluded); the config is .gitea|.github/ISSUE_TEMPLATE/config.yaml|yml.
 * A template that fails Gitea's checks is left out and counted in X-Gitea-Warning.
 */
import YAML from 'yaml';
import type { GitReaderPool } from './git/reader';
import { parseLsTree } from './git/ls-tree';
import { runGit } from './git/run';
import type { RepoWithOwner } from './repos';

const TEMPLATE_DIRS = [
  'ISSUE_TEMPLATE',
  'issue_template',
  '.gitea/ISSUE_TEMPLATE',
  '.gitea/issue_template',
  '.github/ISSUE_TEMPLATE',
  '.github/issue_template',
  '.gitlab/ISSUE_TEMPLATE',
  '.gitlab/issue_template',
];
const CONFIG_CANDIDATES = ['.gitea/ISSUE_TEMPLATE/config', '.gitea/issue_template/config', '.github/ISSUE_TEMPLATE/config', '.github/issue_template/config'];
const MAX_SIZE = 1024 * 1024;

export interface IssueTemplateJson {
  name: string;
  title: string;
  about: string;
  labels: string[] | null;
  assignees: string[] | null;
  ref: string;
  content: string;
  body: Record<string, unknown>[] | null;
  file_name: string;
}

export interface IssueConfigJson {
  blank_issues_enabled: boolean;
  contact_links: { name: string; url: string; about: string }[];
}

const defaultConfig = (): IssueConfigJson => ({ blank_issues_enabled: true, contact_links: [] });

function stringSlice(v: unknown): string[] | null {
  if (v === undefined || v === null || v === '') return null;
  if (typeof v === 'string') {
    const out = v.split(',').map((s) => s.trim()).filter(Boolean);
    return out.length ? out : null;
  }
  if (Array.isArray(v)) return v.map(String);
  throw new Error(`cannot unmarshal ${typeof v} into IssueTemplateStringSlice`);
}

function str(v: unknown): string {
  return v === undefined || v === null ? '' : String(v);
}

/** Gitea's util.EllipsisDisplayString (by characters here). */
function ellipsis(s: string, n: number): string {
  const chars = Array.from(s);
  return chars.length <= n ? s : `${chars.slice(0, n - 1).join('')}…`;
}

const FIELD_TYPES = new Set(['markdown', 'textarea', 'input', 'dropdown', 'checkboxes']);

/** One template file -> its JSON, or an Error (Gitea's Unmarshal + Validate, in outline). */
export function parseIssueTemplate(fileName: string, content: string): IssueTemplateJson | Error {
  const it: IssueTemplateJson = { name: '', title: '', about: '', labels: null, assignees: null, ref: '', content: '', body: null, file_name: fileName };
  try {
    let meta: Record<string, unknown> | null = null;
    if (fileName.endsWith('.md')) {
      const m = /^---\r?\n([\s\S]*?)\r?\n---(?:\r?\n|$)([\s\S]*)$/.exec(content);
      if (m) {
        try {
          const parsed = YAML.parse(m[1]);
          if (parsed && typeof parsed === 'object') meta = parsed as Record<string, unknown>;
          it.content = m[2];
        } catch {
          meta = null;
        }
      }
      if (!meta) {
        it.content = content;
        it.name = fileName.split('/').pop() ?? fileName;
        it.about = ellipsis(content, 80);
      }
    } else {
      const parsed = YAML.parse(content);
      if (parsed !== null && typeof parsed !== 'object') throw new Error('yaml unmarshal: not a mapping');
      meta = (parsed ?? {}) as Record<string, unknown>;
      const fields = meta.body;
      if (fields !== undefined && fields !== null) {
        if (!Array.isArray(fields)) throw new Error('yaml unmarshal: body is not a list');
        it.body = fields.map((f: Record<string, unknown>, i: number) => {
          const type = str(f?.type);
          const visible = f?.visible ?? (type === 'markdown' ? ['form'] : ['form', 'content']);
          return { type, id: str(f?.id) || String(i), attributes: f?.attributes ?? null, validations: f?.validations ?? null, visible };
        });
      }
    }
    if (meta) {
      it.name = str(meta.name);
      it.title = str(meta.title);
      it.about = str(meta.about) || str(meta.description);
      it.labels = stringSlice(meta.labels);
      it.assignees = stringSlice(meta.assignees);
      it.ref = str(meta.ref);
    }
  } catch (err) {
    return err instanceof Error ? err : new Error(String(err));
  }
  if (!it.name.trim()) return new Error("'name' is required");
  if (!it.about.trim()) return new Error("'about' is required");
  if (!fileName.endsWith('.md')) {
    if (!it.body || it.body.length === 0) return new Error("'body' is required");
    const ids = new Set<string>();
    for (const [i, f] of it.body.entries()) {
      if (!FIELD_TYPES.has(String(f.type))) return new Error(`body[${i}]: unknown type`);
      if (ids.has(String(f.id))) return new Error(`body[${i}]: 'id' should be unique`);
      ids.add(String(f.id));
    }
  }
  // A ref without a refs/ prefix names a branch (Gitea's assumption).
  if (!it.ref.startsWith('refs/')) it.ref = `refs/heads/${it.ref}`;
  return it;
}

interface Entry {
  mode: string;
  type: string;
  oid: string;
  path: string;
}

export class IssueTemplateService {
  constructor(
    private readonly readers: GitReaderPool,
    private readonly diskPath: (owner: string, name: string) => string,
  ) {}

  private async entries(repo: RepoWithOwner, paths: string[]): Promise<Entry[] | null> {
    const disk = this.diskPath(repo.owner.name, repo.name);
    let out: string;
    try {
      out = await runGit(['--git-dir', disk, 'ls-tree', '-z', `refs/heads/${repo.defaultBranch}`, '--', ...paths]);
    } catch {
      return null; // no default branch
    }
    return parseLsTree(out);
  }

  private async blob(repo: RepoWithOwner, oid: string): Promise<string | null> {
    const obj = await this.readers.reader(this.diskPath(repo.owner.name, repo.name)).readBlob(oid);
    if (!obj || obj.size > MAX_SIZE) return null;
    return obj.content.toString('utf8');
  }

  async templates(repo: RepoWithOwner): Promise<{ templates: IssueTemplateJson[]; errors: number }> {
    if (repo.isEmpty) return { templates: [], errors: 0 };
    const entries = await this.entries(repo, TEMPLATE_DIRS.map((d) => `${d}/`));
    if (!entries) return { templates: [], errors: 0 };
    const templates: IssueTemplateJson[] = [];
    let errors = 0;
    for (const dir of TEMPLATE_DIRS) {
      for (const e of entries.filter((x) => x.path.startsWith(`${dir}/`) && !x.path.slice(dir.length + 1).includes('/')).sort((a, b) => (a.path < b.path ? -1 : 1))) {
        const base = e.path.slice(dir.length + 1);
        if (base === 'config.yaml' || base === 'config.yml' || !/\.(md|ya?ml)$/.test(base)) continue;
        const text = e.type === 'blob' ? await this.blob(repo, e.oid) : null;
        const parsed = text === null ? new Error('not a readable file') : parseIssueTemplate(e.path, text);
        if (parsed instanceof Error) errors++;
        else templates.push(parsed);
      }
    }
    return { templates, errors };
  }

  /** The config and, when it is broken, why (Gitea then answers the default config). */
  async config(repo: RepoWithOwner): Promise<{ config: IssueConfigJson; error: string | null }> {
    if (repo.isEmpty) return { config: defaultConfig(), error: null };
    const names = CONFIG_CANDIDATES.flatMap((c) => [`${c}.yaml`, `${c}.yml`]);
    const entries = await this.entries(repo, names);
    if (!entries) return { config: defaultConfig(), error: `branch ${repo.defaultBranch} does not exist` };
    const found = names.map((n) => entries.find((e) => e.path === n)).find(Boolean);
    if (!found) return { config: defaultConfig(), error: null };
    const text = found.type === 'blob' ? await this.blob(repo, found.oid) : null;
    if (text === null) return { config: defaultConfig(), error: null };
    let parsed: Record<string, unknown>;
    try {
      parsed = (YAML.parse(text) ?? {}) as Record<string, unknown>;
      if (typeof parsed !== 'object') throw new Error('yaml: unmarshal errors: not a mapping');
    } catch (err) {
      return { config: defaultConfig(), error: (err as Error).message };
    }
    const config: IssueConfigJson = {
      blank_issues_enabled: parsed.blank_issues_enabled === undefined ? true : Boolean(parsed.blank_issues_enabled),
      contact_links: [],
    };
    const links = Array.isArray(parsed.contact_links) ? parsed.contact_links : [];
    for (const [i, l] of links.entries()) {
      const link = { name: str(l?.name), url: str(l?.url), about: str(l?.about) };
      for (const key of ['name', 'url', 'about'] as const) {
        if (!link[key]) return { config: defaultConfig(), error: `contact_link at position ${i + 1} is missing ${key} key` };
      }
      if (!/^(\/|[a-zA-Z][a-zA-Z0-9+.-]*:)/.test(link.url)) return { config: defaultConfig(), error: `${link.url} is not a valid URL` };
      config.contact_links.push(link);
    }
    return { config, error: null };
  }
}
