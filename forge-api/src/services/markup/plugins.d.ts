// The two markdown-it plugins ship no types; both are plain `md.use(plugin)` functions.
declare module 'markdown-it-footnote' {
  import type MarkdownIt from 'markdown-it';
  const plugin: (md: MarkdownIt.MarkdownIt) => void;
  export = plugin;
}
declare module 'markdown-it-deflist' {
  import type MarkdownIt from 'markdown-it';
  const plugin: (md: MarkdownIt.MarkdownIt) => void;
  export = plugin;
}
