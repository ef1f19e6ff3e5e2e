  /* ---------------------------------------------------------------- command table */
  /* Every command of the engine lanes, filtered by engine, function / type (substring of the
   * name or type), layer (substring of the layer's name or type) and minimum duration; rows
   * are (lane, index) pairs in two typed arrays, only the ~30 rows in the scroll window exist
   * as elements (virtualized). A click jumps the timeline there and pins the command. */
  const ROW_H = 20;
  let tRows = { L: new Int32Array(0), I: new Int32Array(0), n: 0 };
  function buildTable() {
    const sel = $('f-engine');
    lanes.forEach((L, li) => { if (L.kind !== 'Layer' && L.n) sel.appendChild(el('option', { value: String(li) }, (L.core >= 0 ? 'Core ' + L.core + ' ' : '') + L.label)); });
    const head = $('cmd-head');
    for (const h of ['Engine', 'Cmd Id', 'Function', 'Function type', 'Start', 'Duration', 'Layer', 'Global Idx']) head.appendChild(el('span', null, h));
    for (const id of ['f-engine', 'f-type', 'f-layer', 'f-dur', 'f-sort']) $(id).addEventListener(id === 'f-engine' || id === 'f-sort' ? 'change' : 'input', () => { clearTimeout(filterTimer); filterTimer = setTimeout(filterTable, 200); });
    $('cmd-scroll').addEventListener('scroll', drawTable);
    filterTable();
  }
  let filterTimer = 0;
  function filterTable() {
    const ty = strHits($('f-type').value.trim()), ly = strHits($('f-layer').value.trim());
    if (ly) lyDecode();
    tRows = filterRows((L) => L.kind !== 'Layer', (L) => {
      const T = L.T, nm = col(T, 'nm'), tyc = col(T, 'ty'), lyc = col(T, 'ly');
      return (i) => {
        if (ty && !ty[isCol(nm) ? nm[i] : nm || 0] && !ty[isCol(tyc) ? tyc[i] : tyc || 0]) return false;
        if (!ly) return true;
        const l = isCol(lyc) ? lyc[i] : lyc || 0;
        return l && (ly[LY.name[l - 1]] || ly[LY.type[l - 1]]);
      };
    }, 'commands');
    drawTable();
  }
  function drawTable() {
    drawTableRows(tRows, (L, i) => {
      const T = L.T, lyi = at(T, 'ly', i);
      return [(L.core >= 0 ? 'Core ' + L.core + ' ' : '') + L.label, String(at(T, 'cmd', i)), str(at(T, 'nm', i)), str(at(T, 'ty', i)),
        fmtTime(L.start[i]), fmtTime(L.end[i] - L.start[i]), lyi ? layerText(lyi - 1) : '-', String(i + 1)];
    });
  }

  /* ---------------------------------------------------------------- legend */
  /* Colours: one per command / layer name (hashed), so the most frequent names of the engine
   * lanes and of the layer lanes are listed with their swatch; then the fixed marks. */
  function buildLegend() {
    const box = legendNames((L) => L.kind === 'Layer', 'Commands:', 12, 'Layers:', 8);
    const fixed = el('span', { class: 'lg-item' });
    const sys = el('span', { class: 'legend' });
    sys.style.background = PALETTE[SYS_COLOR];
    fixed.appendChild(sys);
    fixed.appendChild(document.createTextNode('sys / messages (thin)'));
    box.appendChild(fixed);
    const w = el('span', { class: 'lg-item' });
    w.appendChild(el('span', { class: 'legend hatched' }));
    w.appendChild(document.createTextNode('wait_msg (hatched)'));
    box.appendChild(w);
    const a = el('span', { class: 'lg-item' });
    a.appendChild(el('span', { class: 'legend arrow' }));
    a.appendChild(document.createTextNode('waits for (hover / pin)'));
    const sg = el('span', { class: 'legend arrow' });
    sg.style.background = '#2f6fde';
    a.appendChild(sg);
    a.appendChild(document.createTextNode('signals'));
    box.appendChild(a);
    box.appendChild(el('span', { class: 'lg-title' }, 'Heights: TIU = uArch rate, DMA = bandwidth / DDR peak; labels on blocks \u2265 36 px'));
  }

