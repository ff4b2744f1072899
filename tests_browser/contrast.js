// The contrast of every piece of text in the article's tables against what is behind it
// (tests_browser/test_book.py). Evaluated by Playwright as `() => {...}`.
// - Text: every visible element in a table (and its caption) with characters of its own, and
//   the filter boxes of the scorecard's table; its computed `color`.
// - Behind it: the element's and its ancestors' `background-color` and inset `box-shadow`
//   colours (DataTables paints its stripes that way), composited from the first opaque layer up;
//   the page's canvas (white) when no layer is opaque.
// - Ratio: WCAG 2's contrast ratio (L1 + 0.05) / (L2 + 0.05) of the relative luminances.
// Returns the theme the page shows, the number of text pieces (and of those in an interactive
// DataTables table) and the ten lowest.
() => {
  const parse = (c) => {
    const m = String(c || '').match(/rgba?\(([^)]+)\)/);
    if (!m) return null;
    const p = m[1].split(/[\s,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, bottom) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + bottom[i] * (1 - a)).concat([1]);
  };
  const luminance = (rgb) => {
    const f = (v) => {
      const s = v / 255;
      return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
    };
    return 0.2126 * f(rgb[0]) + 0.7152 * f(rgb[1]) + 0.0722 * f(rgb[2]);
  };
  const behind = (el) => {
    const layers = [];  // innermost first
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e);
      if (/inset/.test(cs.boxShadow)) {
        const shadow = parse(cs.boxShadow);
        if (shadow && shadow[3] > 0) layers.push(shadow);
      }
      const bg = parse(cs.backgroundColor);
      if (bg && bg[3] > 0) layers.push(bg);
      if (layers.length && layers[layers.length - 1][3] >= 1) break;
    }
    let colour = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) colour = over(layers[i], colour);
    return colour;
  };
  const art = document.querySelector('article.bd-article');
  const owns = (el) => [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  const pieces = art ? [...art.querySelectorAll('table, table *')]
    .filter((el) => (owns(el) || el.matches('input, select'))
      && !el.closest('.dt-scroll-head, .dataTables_scrollHead, [hidden], mjx-container')
      && el.getClientRects().length && getComputedStyle(el).visibility !== 'hidden') : [];
  const out = pieces.map((el) => {
    const bg = behind(el);
    const fg0 = parse(getComputedStyle(el).color) || [0, 0, 0, 1];
    const fg = fg0[3] < 1 ? over(fg0, bg) : fg0;
    const [hi, lo] = [luminance(fg), luminance(bg)].sort((a, b) => b - a);
    const table = el.closest('table');
    const cap = table && table.querySelector(':scope > caption .caption-number');
    return {ratio: Math.round(((hi + 0.05) / (lo + 0.05)) * 100) / 100,
            text: (el.value || el.textContent || '').replace(/\s+/g, ' ').trim().slice(0, 40),
            colour: `rgb(${fg.slice(0, 3).map(Math.round).join(', ')})`,
            background: `rgb(${bg.slice(0, 3).map(Math.round).join(', ')})`,
            table: cap ? cap.textContent.trim() : (table && table.className) || ''};
  });
  out.sort((a, b) => a.ratio - b.ratio);
  return {theme: document.documentElement.dataset.theme || null, n: out.length,
          interactive: pieces.filter((el) => el.closest('table.dataTable')).length,
          lowest: out.slice(0, 10)};
}
