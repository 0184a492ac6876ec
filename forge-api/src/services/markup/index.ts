export { renderMarkup, renderRaw, markdownMode, markupMode, MarkupError, MARKUP_MODES } from './render';
export type { RenderRequest, MarkupMode } from './render';
export { sanitize } from './sanitize';
