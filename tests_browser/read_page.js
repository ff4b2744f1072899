// What the browser test reads off one page of the built book (tests_browser/test_book.py).
// Evaluated by Playwright after the page's "load" event as `async (articleSelector) => {...}`;
// returns plain data, the Python tests decide what is wrong.
async (articleSelector) => {
  // The first selector of the list that matches (not the first match in document order:
  // `[role='main']` is also on an ancestor that holds the sidebar).
  const art = articleSelector.split(',').map((sel) => document.querySelector(sel.trim()))
    .find((el) => el) || null;

  // MathJax typesets asynchronously after load: wait for it (when it loaded at all).
  if (window.MathJax && window.MathJax.startup && window.MathJax.startup.promise) {
    await Promise.race([window.MathJax.startup.promise,
                        new Promise((resolve) => setTimeout(resolve, 15000))]);
  }

  const context = (el) => {
    const cell = el.closest('.cell');
    const src = cell && cell.querySelector('.cell_input');
    if (src) {
      const first = src.textContent.trim().split('\n').find((l) => l.trim() && l.trim() !== '---'
        && !/^(mystnb|tags|figure|caption|name):/.test(l.trim())) || '';
      return 'cell: ' + first.trim().slice(0, 80);
    }
    const sec = el.closest('section');
    const h = sec && sec.querySelector('h1, h2, h3, h4');
    return h ? 'section: ' + h.textContent.replace('#', '').trim().slice(0, 80) : '';
  };
  // Visible text without the copy buttons sphinx-copybutton adds.
  const textOf = (el) => {
    const copy = el.cloneNode(true);
    copy.querySelectorAll('button, .copybtn').forEach((e) => e.remove());
    return copy.textContent.replace(/\s+/g, ' ').trim();
  };
  // A caption's own text: without its number, permalink sign, download line and references
  // to the book's own numbered figures ({numref}).
  const captionText = (cap) => {
    if (!cap) return null;
    const copy = cap.cloneNode(true);
    copy.querySelectorAll('.caption-number, .headerlink, .figure-downloads, .std-numref')
      .forEach((e) => e.remove());
    return copy.textContent.replace(/\s+/g, ' ').trim();
  };
  const hidden = (el) => {
    const d = el.closest('details');
    return (d && !d.open && !el.matches('summary, summary *')) || el.getClientRects().length === 0;
  };

  // Images: wait until each has loaded or failed (lazy ones are made eager).
  const imgs = art ? [...art.querySelectorAll('img')] : [];
  imgs.forEach((i) => { if (i.loading === 'lazy') i.loading = 'eager'; });
  await Promise.all(imgs.map((i) => i.complete ? null : new Promise((resolve) => {
    i.addEventListener('load', resolve);
    i.addEventListener('error', resolve);
    setTimeout(resolve, 10000);
  })));
  const isSvgSrc = (src) => /^data:image\/svg\+xml/i.test(src)
    || /\.svgz?$/i.test((src || '').split(/[?#]/)[0]);
  const images = imgs.map((i) => ({
    src: i.getAttribute('src'), complete: i.complete, naturalWidth: i.naturalWidth,
    where: context(i), svg: isSvgSrc(i.getAttribute('src')),
  }));

  // ---- Text size inside SVG figures, in CSS px as shown on this page.
  // Each <text>/<tspan> with its own characters: computed font size x the scale of its
  // screen transform. An <img> SVG is re-created inline at the size the page shows it (so
  // the scale is rendered width / intrinsic width); an inline <svg> is measured in place.
  const holder = document.createElement('div');
  holder.style.cssText = 'position:absolute;left:-30000px;top:0;visibility:hidden;';
  document.body.appendChild(holder);
  const measureTexts = (svg) => {
    const out = [];
    svg.querySelectorAll('text, tspan').forEach((e) => {
      const own = [...e.childNodes].filter((n) => n.nodeType === 3).map((n) => n.textContent)
        .join('').trim();
      if (!own) return;
      const m = e.getScreenCTM();
      if (!m) return;
      const scale = Math.sqrt(Math.abs(m.a * m.d - m.b * m.c));
      const px = parseFloat(getComputedStyle(e).fontSize) * scale;
      if (px > 0) out.push({text: own.slice(0, 40), px});
    });
    return out;
  };
  const smallest = (texts) => texts.reduce((a, b) => (a && a.px <= b.px ? a : b), null);
  const figureImages = [];
  for (const i of imgs) {
    const info = {src: i.getAttribute('src'), where: context(i), svg: isSvgSrc(i.getAttribute('src')),
                  inFigure: !!i.closest('figure'), hidden: hidden(i)};
    const r = i.getBoundingClientRect();
    info.renderedWidth = r.width;
    info.naturalWidth = i.naturalWidth;
    if (info.svg && !info.hidden && r.width > 0 && i.naturalWidth > 0) {
      try {
        const resp = await fetch(i.currentSrc || i.src);
        const doc = new DOMParser().parseFromString(await resp.text(), 'image/svg+xml');
        const svg = document.importNode(doc.documentElement, true);
        if (!svg.getAttribute('viewBox')) {
          svg.setAttribute('viewBox', `0 0 ${i.naturalWidth} ${i.naturalHeight}`);
        }
        svg.setAttribute('width', String(r.width));
        svg.setAttribute('height', String(r.height));
        holder.appendChild(svg);
        const texts = measureTexts(svg);
        holder.removeChild(svg);
        info.textCount = texts.length;
        info.smallest = smallest(texts);
      } catch (err) {
        info.error = String(err);
      }
    }
    figureImages.push(info);
  }
  const inlineSvgs = art ? [...art.querySelectorAll('svg')].filter((s) =>
    !s.closest('mjx-container, button, .headerlink, summary') && !s.parentElement.closest('svg')
    && (s.closest('figure') || s.closest('.cell_output'))) : [];
  for (const s of inlineSvgs) {
    const info = {src: '<inline svg>', where: context(s), svg: true, inFigure: !!s.closest('figure'),
                  hidden: hidden(s), renderedWidth: s.getBoundingClientRect().width};
    if (!info.hidden) {
      const texts = measureTexts(s);
      info.textCount = texts.length;
      info.smallest = smallest(texts);
    }
    figureImages.push(info);
  }
  holder.remove();

  const figures = art ? [...art.querySelectorAll('figure')].map((f) => {
    const img = f.querySelector('img');
    const dl = f.querySelector('.figure-downloads');
    const links = dl ? [...dl.querySelectorAll('a')].map((a) => ({
      text: a.textContent.trim(), href: a.getAttribute('href')})) : [];
    return {id: f.id, img: img && img.getAttribute('src'), caption: captionText(f.querySelector('figcaption')),
            downloads: links, where: context(f)};
  }) : [];
  const tableCaptions = art ? [...art.querySelectorAll('table > caption')].map((c) => ({
    caption: captionText(c), where: context(c)})) : [];

  // Every table a reader sees: its caption and number ("Table 3.1"), and cells that show
  // pandas' leftovers (NaN, <NA>, None). Tables in closed dropdowns count too; the hidden
  // fallback copies of interactive tables do not.
  const tables = art ? [...art.querySelectorAll('table')].filter((t) =>
    !t.closest('[hidden]') && !t.closest('.dt-scroll-head, .dataTables_scrollHead'))
    .map((t) => {
      const cap = t.querySelector(':scope > caption');
      const num = cap && cap.querySelector('.caption-number');
      const bad = [...t.querySelectorAll('td, th')].map((c) => c.textContent.trim())
        .filter((x) => /^(NaN|nan|<NA>|None|NaT)$/.test(x));
      return {caption: captionText(cap), number: num ? num.textContent.trim() : null,
              interactive: t.classList.contains('dataTable'), badCells: bad.slice(0, 5),
              nBad: bad.length, where: context(t)};
    }) : [];

  const cellImages = art ? [...art.querySelectorAll('.cell_output img')].map((i) => {
    const fig = i.closest('figure');
    return {src: i.getAttribute('src'), inFigure: !!fig,
            caption: fig ? captionText(fig.querySelector('figcaption')) : null, where: context(i)};
  }) : [];

  // Error outputs: myst-nb renders exceptions as `.output.traceback`, stderr as
  // `.output.stderr`; other renderers use `.output.error` / `.output_error`.
  const errors = [];
  const seen = new Set();
  const flag = (el, why) => {
    if (seen.has(el)) return;
    seen.add(el);
    errors.push({why, where: context(el), text: textOf(el).slice(0, 300)});
  };
  if (art) {
    art.querySelectorAll('.output.traceback, .output.error, .output_error, .cell_output .traceback')
      .forEach((e) => flag(e, 'error output'));
    art.querySelectorAll('.output.stderr, .output_stderr').forEach((e) => {
      if (/Error/.test(e.textContent)) flag(e, 'stderr output containing "Error"');
    });
    // Innermost output areas first, then whole cell outputs not flagged yet.
    const tracebackText = (e) => e.textContent.includes('Traceback (most recent call last)');
    art.querySelectorAll('.cell_output .output').forEach((e) => {
      if (tracebackText(e) && ![...seen].some((s) => s.contains(e) || e.contains(s))) {
        flag(e, 'output containing "Traceback (most recent call last)"');
      }
    });
    art.querySelectorAll('.cell_output').forEach((e) => {
      if (tracebackText(e) && ![...seen].some((s) => s.contains(e) || e.contains(s))) {
        flag(e, 'output containing "Traceback (most recent call last)"');
      }
    });
  }

  // ---- Maths: every Sphinx math element typeset by MathJax; no raw TeX left in the text.
  const mathEls = art ? [...art.querySelectorAll('span.math, div.math')] : [];
  const untypeset = mathEls.filter((m) => !m.querySelector('mjx-container, .katex'))
    .map((m) => ({tex: m.textContent.trim().slice(0, 80), where: context(m)}));
  const rawTex = [];
  if (art) {
    const walker = document.createTreeWalker(art, NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => n.parentElement.closest(
        'pre, code, script, style, textarea, mjx-container, .katex, .highlight, .cell_input, svg')
        ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT,
    });
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const m = n.textContent.match(/\\\(|\\\)|\\\[|\\\]|\$\$|\\begin\{/);
      if (m) {
        const at = Math.max(0, m.index - 30);
        rawTex.push({text: n.textContent.slice(at, m.index + 40).replace(/\s+/g, ' '),
                     where: context(n.parentElement)});
      }
    }
  }
  const math = {
    elements: mathEls.length,
    typeset: art ? art.querySelectorAll('mjx-container, .katex').length : 0,
    untypeset, rawTex,
  };

  // ---- Tables and code/output blocks wider than the text column.
  let column = null;
  const wide = [];
  if (art) {
    const r = art.getBoundingClientRect();
    const cs = getComputedStyle(art);
    column = {left: r.left + parseFloat(cs.paddingLeft), right: r.right - parseFloat(cs.paddingRight)};
    column.width = column.right - column.left;
    const blocks = [...art.querySelectorAll('table, pre, .cell_output .output:not(:has(table, pre))')];
    for (const el of blocks) {
      if (hidden(el) || el.closest('mjx-container')) continue;
      const b = el.getBoundingClientRect();
      const width = Math.max(b.width, el.scrollWidth);
      if (b.left < column.left - 1 || b.left + width > column.right + 1) {
        const kind = el.tagName === 'TABLE' ? 'table'
          : el.closest('.cell_output') ? 'output' : el.closest('.cell_input') ? 'code' : 'code block';
        wide.push({kind, width: Math.round(width), where: context(el),
                   text: textOf(el).slice(0, 60)});
      }
    }
  }

  // ---- Code cells with imports or asserts: their source must be collapsed (hide-input), but
  // a chapter's settings cell (tag `settings`), which a reader is meant to read and change.
  const visibleSetup = [];
  if (art) {
    art.querySelectorAll('.cell').forEach((cell) => {
      const input = cell.querySelector('.cell_input');
      if (!input) return;  // remove-input: no source on the page at all
      if (cell.classList.contains('tag_settings')) return;
      const src = input.textContent;
      const imports = /^\s*(import\s+[\w.]+|from\s+[\w.]+\s+import\s)/m.test(src);
      const asserts = /^\s*assert\b/m.test(src);
      if ((imports || asserts) && !hidden(input)) {
        visibleSetup.push({what: [imports && 'imports', asserts && 'asserts'].filter(Boolean).join(' and '),
                           where: context(input)});
      }
    });
  }

  // ---- Figures: each image's alt text; each figure's box at this width (its image scrolls in
  // div.hca-figure-scroll, under a cue shown while the box is narrower: book/_ext/hca_book/
  // figures.py, book/_static/hca-figures.js); every download link's `download` attribute.
  const figureAlts = imgs.filter((i) => i.closest('figure')).map((i) => ({
    src: i.getAttribute('src'), alt: i.getAttribute('alt'), where: context(i)}));
  const shownRect = (el) => !!el && el.getClientRects().length > 0
    && el.getBoundingClientRect().width > 0 && getComputedStyle(el).visibility !== 'hidden';
  const figureBoxes = art ? [...art.querySelectorAll('figure')].filter((f) => f.querySelector('img'))
    .map((f) => {
      const img = f.querySelector('img');
      const box = f.querySelector('.hca-figure-scroll') || f;
      const cue = f.querySelector('.hca-figure-cue');
      const full = cue && cue.querySelector('a.hca-figure-full');
      return {id: f.id, where: context(f), shown: box.clientWidth, content: box.scrollWidth,
              cueShown: shownRect(cue),
              cueText: cue ? cue.textContent.replace(/\s+/g, ' ').trim() : null,
              cueAbove: cue && shownRect(cue)
                ? cue.getBoundingClientRect().bottom <= img.getBoundingClientRect().top + 1 : null,
              full: full ? {href: full.href, target: full.getAttribute('target'),
                            download: full.hasAttribute('download')} : null,
              img: img.src};
    }) : [];
  const downloadLinks = [...document.querySelectorAll('a.figure-download, a.hca-download')]
    .map((a) => ({href: a.getAttribute('href'), download: a.getAttribute('download'),
                  text: a.textContent.trim(), where: context(a)}));

  // ---- The answer paragraph (tests_browser/test_book.py, test_phone_answer_first): the first
  // <p> of the article, outside figures, tables, closed <details> and code, that names both
  // setups; its text, where its first line starts, and what stands above it.
  const norm = (t) => t.replace(/[\u2018\u2019]/g, "'").replace(/\s+/g, ' ').trim();
  const answerEl = art ? [...art.querySelectorAll('p')].find((p) => {
    if (p.closest('figure, table, .cell_input, details:not([open]), .hca-chapter-downloads')) {
      return false;
    }
    const t = norm(p.textContent).toLowerCase();
    return t.includes("authors' setup") && t.includes('careful setup');
  }) : null;
  let answer = null;
  if (answerEl) {
    const above = (el) => !!(el.compareDocumentPosition(answerEl) & Node.DOCUMENT_POSITION_FOLLOWING)
      && !el.contains(answerEl);
    const what = (el) => (el.matches('details, .toggle-button') ? 'hidden-code toggle ('
      + norm((el.querySelector('summary') || el).textContent).slice(0, 40) + ')'
      : el.tagName.toLowerCase()) + ` (${context(el)})`;
    const r = answerEl.getBoundingClientRect();
    answer = {text: norm(answerEl.textContent), top: r.top + window.scrollY,
              above: [...art.querySelectorAll('details, .toggle-button, table, figure')]
                .filter(above).map(what)};
  }

  const links = [...document.querySelectorAll('a[href]')].map((a) => ({
    href: a.href, raw: a.getAttribute('href'),
    text: a.textContent.replace(/\s+/g, ' ').trim().slice(0, 60),
  }));

  return {hasArticle: !!art, images, figures, tableCaptions, tables, cellImages, errors, links,
          figureImages, math, column, wide, visibleSetup, figureAlts, figureBoxes, downloadLinks,
          answer};
}
