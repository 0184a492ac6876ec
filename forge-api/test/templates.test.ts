import {
  licenseNames,
  licenseText,
  licenseTemplate,
  gitignoreNames,
  gitignoreText,
  labelTemplateNames,
  labelTemplate,
  readmeText,
} from '../src/services/templates';

describe('license templates', () => {
  it("lists Gitea's 28 licenses with their full texts", () => {
    const names = licenseNames();
    expect(names).toHaveLength(28);
    expect(names).toEqual(expect.arrayContaining(['MIT', 'Apache-2.0', 'GPL-3.0', 'BSD-2-Clause', 'BSD-3-Clause', 'MPL-2.0', 'LGPL-3.0', 'AGPL-3.0', 'Unlicense']));
    for (const n of names) expect((licenseTemplate(n) ?? '').length).toBeGreaterThan(300);
    expect(licenseTemplate('GPL-3.0')).toContain('GNU GENERAL PUBLIC LICENSE');
  });

  it('fills year and owner placeholders', () => {
    const mit = licenseText('MIT', { year: 2026, owner: 'octo' })!;
    expect(mit).toContain('Copyright (c) 2026 octo');
    expect(mit).not.toMatch(/<year>|<copyright holders>/);
    const bsd0 = licenseText('0BSD', { year: 2026, owner: 'octo', email: 'o@example.com' })!;
    expect(bsd0).toContain('Copyright (C) 2026 by octo o@example.com');
    // the word AUTHOR elsewhere in the 0BSD text is prose, not a placeholder
    expect(bsd0).toContain('AUTHOR BE LIABLE');
  });

  it('returns null for unknown names', () => {
    expect(licenseText('nope', { year: 1, owner: 'x' })).toBeNull();
    expect(licenseTemplate('mit')).toBeNull();
    expect(licenseTemplate('__proto__')).toBeNull();
  });
});

describe('gitignore templates', () => {
  it('lists names and returns texts', () => {
    const names = gitignoreNames();
    expect(names).toEqual(expect.arrayContaining(['Node', 'Go', 'Python', 'Rust', 'Java', 'C', 'C++', 'macOS']));
    expect(gitignoreText('Node')).toContain('node_modules/');
    expect(gitignoreText('Python')).toContain('__pycache__/');
    expect(gitignoreText('Unknown')).toBeNull();
    expect(gitignoreText('constructor')).toBeNull();
  });
});

describe('label templates', () => {
  it("holds Gitea's Default and Advanced sets", () => {
    expect(labelTemplateNames()).toEqual(['Advanced', 'Default']);
    const def = labelTemplate('Default')!;
    expect(def.map((l) => l.name)).toEqual(['bug', 'duplicate', 'enhancement', 'help wanted', 'invalid', 'question', 'wontfix']);
    expect(def[0]).toEqual({ name: 'bug', exclusive: false, color: 'ee0701', description: 'Something is not working' });
    const adv = labelTemplate('Advanced')!;
    expect(adv).toHaveLength(18);
    expect(adv.find((l) => l.name === 'Priority/High')).toEqual({ name: 'Priority/High', exclusive: true, color: 'd32f2f', description: 'The priority is high' });
    expect(adv.filter((l) => l.name.startsWith('Kind/')).every((l) => !l.exclusive)).toBe(true);
    expect(labelTemplate('default')).toBeNull();
  });

  it('hands out copies', () => {
    labelTemplate('Default')![0].name = 'changed';
    expect(labelTemplate('Default')![0].name).toBe('bug');
  });
});

describe('readme template', () => {
  it('expands name and description', () => {
    expect(readmeText('Default', { Name: 'proj', Description: 'Does things' })).toBe('# proj\n\nDoes things');
    expect(readmeText('Other', {})).toBeNull();
  });
});
