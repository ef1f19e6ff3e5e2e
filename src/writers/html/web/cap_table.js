  /* ---------------------------------------------------------------- event table (capture) */
  /* A capture's page: table.js's place. Every event of the thread lanes (steps, activities,
   * operators, runtime calls, ranges, marks; counter samples are not events), filtered by
   * thread, name / type (substring of the name, the kind or the operator type), tensor /
   * attribute text (substring of any text argument: shapes, dtypes, tensor names, attributes)
   * and minimum duration, optionally longest first; virtualized as the command table (only
   * the rows in the scroll window exist); a row click moves the timeline there and pins it. */
  const ROW_H = 20;
  const EV_COLS = ['Thread', 'Name', 'Kind', 'Type / category', 'Start', 'Duration', 'Inputs', 'Outputs', 'Attributes'];
  const EV_GRID = '100px 1.3fr 92px 0.9fr 86px 80px 1.4fr 1.4fr 1.2fr';
  let tRows = { L: new Int32Array(0), I: new Int32Array(0), n: 0 };
  const isEvLane = (L) => L.kind !== 'Counter' && L.kind !== 'Layer';
  function buildTable() {
    $('commands').querySelector('h2').textContent = 'Events';
    const sel = $('f-engine');
    sel.options[0].textContent = 'all threads';
    lanes.forEach((L, li) => { if (isEvLane(L) && L.n) sel.appendChild(el('option', { value: String(li) }, L.label)); });
    $('f-type').placeholder = 'name / kind / type contains';
    $('f-layer').placeholder = 'tensor / attribute contains';
    const head = $('cmd-head');
    head.style.gridTemplateColumns = EV_GRID;
    for (const h of EV_COLS) head.appendChild(el('span', null, h));
    for (const id of ['f-engine', 'f-type', 'f-layer', 'f-dur', 'f-sort']) $(id).addEventListener(id === 'f-engine' || id === 'f-sort' ? 'change' : 'input', () => { clearTimeout(filterTimer); filterTimer = setTimeout(filterTable, 200); });
    $('cmd-scroll').addEventListener('scroll', drawTable);
    filterTable();
  }
  let filterTimer = 0;
  /* Whether argument set a has a text value containing q (lower case), among the arguments
   * named in `keys` (a Set; null: any); cached per set. */
  const TYPE_KEYS = new Set(['op_type', 'category']);
  function argHit(a, q, cache, keys) {
    if (!a) return false;
    let v = cache.get(a);
    if (v === undefined) {
      const as = argset(a) || [];
      v = false;
      for (let j = 1; j < as.length && !v; j += 2) v = typeof as[j] === 'string' && (!keys || keys.has(str(as[j - 1]))) && as[j].toLowerCase().includes(q);
      cache.set(a, v);
    }
    return v;
  }
  function filterTable() {
    const ty = strHits($('f-type').value.trim());
    const tq = $('f-type').value.trim().toLowerCase(), tcache = new Map();
    const aq = $('f-layer').value.trim().toLowerCase(), cache = new Map();
    tRows = filterRows(isEvLane, (L) => {
      const T = L.T, nm = col(T, 'nm'), tyc = col(T, 'ty'), ar = col(T, 'ar');
      return (i) => {
        const a = isCol(ar) ? ar[i] : ar || 0;
        if (ty && !ty[isCol(nm) ? nm[i] : nm || 0] && !ty[isCol(tyc) ? tyc[i] : tyc || 0] && !argHit(a, tq, tcache, TYPE_KEYS)) return false;
        return !aq || argHit(a, aq, cache, null);
      };
    }, 'events');
    drawTable();
  }
  function drawTable() {
    drawTableRows(tRows, (L, i) => {
      const a = capArgs(L, i), attrs = a.attrs.map(([k, v]) => k + '=' + v).join(', ');
      return [L.label, str(at(L.T, 'nm', i)), a.kind, a.type, fmtTime(L.start[i]), fmtTime(L.end[i] - L.start[i]),
        a.inputs.map(tensorText).join(', '), a.outputs.map(tensorText).join(', '), attrs];
    }, EV_GRID, true);
  }

  /* ---------------------------------------------------------------- legend (capture) */
  /* The most frequent event names with their colour (colours are per name), the counter
   * series, and how to read the lanes. */
  function buildLegend() {
    const box = legendNames((L) => L.kind === 'Counter', 'Events:', 12, 'Counters:', 6);
    box.appendChild(el('span', { class: 'lg-title' }, 'Rows: nesting depth (step \u2192 activity \u2192 operator \u2192 \u2026); counter lanes: value over time; labels on blocks \u2265 36 px'));
  }

