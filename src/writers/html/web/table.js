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
    const eng = $('f-engine').value, ty = strHits($('f-type').value.trim()), ly = strHits($('f-layer').value.trim());
    const minNs = Number($('f-dur').value || 0) * 1000;
    let total = 0;
    for (const L of lanes) if (L.kind !== 'Layer') total += L.n;
    const RL = new Int32Array(total), RI = new Int32Array(total);
    let n = 0;
    if (ly) lyDecode();
    lanes.forEach((L, li) => {
      if (L.kind === 'Layer' || !L.n || !L.ready || (eng !== '' && Number(eng) !== li)) return;
      const T = L.T, nm = col(T, 'nm'), tyc = col(T, 'ty'), lyc = col(T, 'ly');
      for (let i = 0; i < L.n; i++) {
        if (minNs && L.end[i] - L.start[i] < minNs) continue;
        if (ty && !ty[isCol(nm) ? nm[i] : nm || 0] && !ty[isCol(tyc) ? tyc[i] : tyc || 0]) continue;
        if (ly) { const l = isCol(lyc) ? lyc[i] : lyc || 0; if (!l || (!ly[LY.name[l - 1]] && !ly[LY.type[l - 1]])) continue; }
        RL[n] = li; RI[n] = i; n++;
      }
    });
    tRows = tableRows(RL, RI, n);
    $('f-count').textContent = n.toLocaleString('en-US') + ' of ' + total.toLocaleString('en-US') + ' commands';
    $('cmd-spacer').style.height = n * ROW_H + 'px';
    $('cmd-scroll').scrollTop = 0;
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

