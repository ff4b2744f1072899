// Figures wider than the text column (a phone): book/_ext/hca_book/figures.py puts each figure
// image in its own sideways-scrolling box (div.hca-figure-scroll) under a hidden cue
// (p.hca-figure-cue: "part of the figure is shown. Swipe it sideways, or open it full size").
// This script shows the cue, with the share of the figure's width on screen, while the box is
// narrower than the image, and hides it again when the window grows (the <figure> gets the
// class hca-figure-wide; book/_static/hca-book.css).
(() => {
  'use strict';
  const update = (box) => {
    const fig = box.closest('figure');
    if (!fig) return;
    const wide = box.scrollWidth > box.clientWidth + 1;
    fig.classList.toggle('hca-figure-wide', wide);
    const shown = fig.querySelector('.hca-figure-shown');
    if (shown && wide) {
      shown.textContent = `${Math.floor((100 * box.clientWidth) / box.scrollWidth)} %`;
    }
  };
  const start = () => {
    const boxes = [...document.querySelectorAll('div.hca-figure-scroll')];
    if (!boxes.length) return;
    const watch = new ResizeObserver((entries) => entries.forEach((e) => update(e.target)));
    boxes.forEach((box) => {
      watch.observe(box);
      const img = box.querySelector('img');
      if (img && !img.complete) img.addEventListener('load', () => update(box));
      update(box);
    });
  };
  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
