// The scorecard's interactive table (notebooks/09_scorecard.md, shown with itables' DataTables
// bundle, served offline from _static/itables): a row of filters under the column names.
// - A verdict column ("... : verdict") gets a drop-down of the verdicts it holds (in the order
//   of the cells' data-rank, hca.paper.scorecard) that keeps exactly the chosen verdict:
//   "reproduced" does not match "not reproduced".
// - Every other column gets a text box (DataTables' own column search).
// Each control is named after its column (aria-label). The column names stay visible, and the
// sort buttons DataTables adds carry the column's name ("chapter: Activate to sort").
(() => {
  'use strict';
  const plain = (html) => {
    const d = document.createElement('div');
    d.innerHTML = String(html);
    return d.textContent.replace(/\s+/g, ' ').trim();
  };
  const rankOf = (html) => {
    const m = String(html).match(/data-rank="(\d+)"/);
    return m ? Number(m[1]) : 1e9;
  };

  const addFilters = ($, table) => {
    if (table.dataset.hcaFilters) return;
    table.dataset.hcaFilters = '1';
    const dt = $(table).DataTable();
    const thead = table.querySelector('thead');
    const row = document.createElement('tr');
    row.className = 'hca-filters';
    dt.columns().every(function () {
      const col = this;
      const title = plain(col.header().textContent);
      const th = document.createElement('th');
      th.dataset.dtOrder = 'disable';
      let control;
      if (/verdict$/i.test(title)) {
        control = document.createElement('select');
        const seen = new Map();
        col.data().toArray().forEach((cell) => {
          const v = plain(cell);
          if (v && !seen.has(v)) seen.set(v, rankOf(cell));
        });
        const values = [...seen.keys()].sort((a, b) => seen.get(a) - seen.get(b)
          || a.localeCompare(b));
        control.append(new Option('all verdicts', ''));
        values.forEach((v) => control.append(new Option(v, v)));
        control.addEventListener('change', () => {
          const want = control.value;
          col.search(want ? (cell) => plain(cell) === want : '').draw();
        });
      } else {
        control = document.createElement('input');
        control.type = 'search';
        control.placeholder = 'filter';
        control.addEventListener('input', () => col.search(control.value).draw());
      }
      control.setAttribute('aria-label', `Filter ${title}`);
      control.title = `Filter the column "${title}"`;
      control.addEventListener('click', (e) => e.stopPropagation());
      th.appendChild(control);
      row.appendChild(th);
    });
    thead.appendChild(row);
  };

  const start = async () => {
    const key = Object.keys(window).find((k) => k.startsWith('_itables_'));
    if (!key) return;  // no interactive table on this page
    const {jQuery: $} = await window[key];
    // itables gives the table its classes when it initialises it, once its bundle has loaded:
    // look for the claims table until then (up to 30 s), then once more for late tables
    for (let i = 0; i < 300; i++) {
      const ready = [...document.querySelectorAll('table.hca-claims.dataTable')];
      ready.forEach((t) => addFilters($, t));
      if (ready.length && ![...document.querySelectorAll('table.hca-claims')]
        .some((t) => !t.classList.contains('dataTable'))) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };

  if (document.readyState === 'loading') {
    document.addEventListener('DOMContentLoaded', start);
  } else {
    start();
  }
})();
