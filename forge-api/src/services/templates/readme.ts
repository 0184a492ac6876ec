/** README templates: Gitea ships one, "Default", expanded with the repository's name and description. */
const README_TEMPLATES: Record<string, string> = {
  Default: '# {Name}\n\n{Description}',
};

export function readmeNames(): string[] {
  return Object.keys(README_TEMPLATES);
}

/** Expands `{Key}` placeholders (Name, Description, OwnerName, CloneURL.HTTPS, CloneURL.SSH); null for an unknown template. */
export function readmeText(name: string, vars: Record<string, string>): string | null {
  const template = Object.prototype.hasOwnProperty.call(README_TEMPLATES, name) ? README_TEMPLATES[name] : undefined;
  if (template === undefined) return null;
  return template.replace(/\{([A-Za-z.]+)\}/g, (whole, key: string) => (key in vars ? vars[key] : whole));
}
