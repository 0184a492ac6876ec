import sanitizeHtml from 'sanitize-html';

/**
 * The allowlist Gitea applies to rendered markup (bluemonday's UGC policy plus Gitea's extras):
 * formatting, tables, lists, task-list checkboxes, details/summary, images; links keep only
 * http(s)/mailto and relative URLs and always get rel="nofollow"; ids are prefixed with
 * "user-content-" so user text cannot collide with the page's own ids. Scripts, styles,
 * event-handler attributes and javascript: URLs never pass.
 */
const ALLOWED_TAGS = [
  'a', 'abbr', 'acronym', 'address', 'b', 'bdi', 'bdo', 'big', 'blockquote', 'br', 'caption', 'center', 'cite',
  'code', 'col', 'colgroup', 'dd', 'del', 'details', 'dfn', 'div', 'dl', 'dt', 'em', 'figcaption', 'figure',
  'font', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'img', 'input', 'ins', 'kbd', 'li', 'mark', 'ol', 'p',
  'picture', 'pre', 'q', 'rp', 'rt', 'ruby', 's', 'samp', 'section', 'small', 'source', 'span', 'strike',
  'strong', 'sub', 'summary', 'sup', 'table', 'tbody', 'td', 'tfoot', 'th', 'thead', 'time', 'tr', 'tt', 'u',
  'ul', 'var', 'video', 'audio', 'wbr',
];

const CLASS_ALLOWED = [
  /^ref-issue$/, /^ref-external-issue$/, /^mention$/, /^task-list-item$/, /^contains-task-list$/,
  /^language-[\w+#.-]+$/, /^chroma$/, /^[a-z]{1,3}$/, // chroma highlighting token classes
  /^footnote/, /^emoji$/, /^issue-keyword$/,
];

function keepClasses(value: string | undefined): string | undefined {
  if (!value) return undefined;
  const kept = value.split(/\s+/).filter((c) => CLASS_ALLOWED.some((re) => re.test(c)));
  return kept.length ? kept.join(' ') : undefined;
}

function prefixId(value: string | undefined): string | undefined {
  if (!value) return value;
  return value.startsWith('user-content-') ? value : `user-content-${value}`;
}

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: ALLOWED_TAGS,
  allowedAttributes: {
    '*': ['id', 'title', 'dir', 'lang', 'class', 'align'],
    a: ['href', 'name', 'rel', 'target'],
    img: ['src', 'alt', 'width', 'height', 'loading'],
    input: ['type', 'checked', 'disabled', 'data-source-position'],
    td: ['colspan', 'rowspan'],
    th: ['colspan', 'rowspan', 'scope'],
    ol: ['start', 'type', 'reversed'],
    li: ['value'],
    details: ['open'],
    video: ['src', 'controls', 'width', 'height', 'poster'],
    audio: ['src', 'controls'],
    source: ['src', 'type', 'srcset', 'media'],
    font: ['color'],
    time: ['datetime'],
    q: ['cite'],
    blockquote: ['cite'],
    del: ['cite', 'datetime'],
    ins: ['cite', 'datetime'],
  },
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite', 'poster', 'srcset'],
  allowProtocolRelative: true,
  selfClosing: ['img', 'br', 'hr', 'input', 'source', 'wbr', 'col'],
  disallowedTagsMode: 'discard',
  transformTags: {
    '*': (tagName, attribs) => {
      const out: sanitizeHtml.Attributes = { ...attribs };
      const cls = keepClasses(out.class);
      if (cls) out.class = cls;
      else delete out.class;
      if (out.id) out.id = prefixId(out.id)!;
      if (tagName === 'a' && out.name) out.name = prefixId(out.name)!;
      if (tagName === 'a') {
        // ids are prefixed, so same-page links (headings, footnotes) are prefixed with them
        if (out.href && out.href.startsWith('#') && out.href.length > 1 && !out.href.startsWith('#user-content-')) {
          out.href = `#user-content-${out.href.slice(1)}`;
        }
        const opener = out.target === '_blank';
        if (!opener) delete out.target;
        out.rel = opener ? 'nofollow noopener' : 'nofollow';
      }
      if ((tagName === 'th' || tagName === 'td') && out.style) {
        // markdown-it writes column alignment as a style; Gitea's renderer uses the align attribute
        const m = /text-align:\s*(left|right|center)/.exec(out.style);
        if (m) out.align = m[1];
      }
      delete out.style;
      if (tagName === 'input') {
        if (out.type !== 'checkbox') return { tagName: 'span', attribs: {} };
        out.disabled = '';
      }
      return { tagName, attribs: out };
    },
  },
};

export function sanitize(html: string): string {
  return sanitizeHtml(html, OPTIONS);
}
