  /* ---------------------------------------------------------------- search */
  /* Incremental: the lanes are scanned in slices of ~10 ms (setTimeout between them) with the
   * running count shown; a new query cancels the running one. Matches stay per lane (L.mark,
   * sorted by start); Enter walks them in time order across lanes (cursor: time + lane). */
  let matchCount = 0, matchPos = -1, cursor = null, lastQuery = '', searchJob = 0;
  function search(q) {
    q = (q || '').trim();
    lastQuery = q;
    matchCount = 0;
    matchPos = -1;
    cursor = null;
    const job = ++searchJob;
    for (const L of lanes) { L.mark = null; L.markVisible = null; }
    const info = $('search-info');
    if (!q) { info.textContent = ''; dirty = true; schedule(); return Promise.resolve(0); }
    const idm = /^#?(\d+)$/.exec(q), gm = /^(?:g|gidx|global\s*idx)\s*[:#=]?\s*(\d+)$/i.exec(q);
    const want = idm ? Number(idm[1]) : -1, wantG = gm ? Number(gm[1]) - 1 : -1;
    const ql = q.toLowerCase();
    let strHit = null;
    if (want < 0 && !gm) {
      lyDecode();
      strHit = new Uint8Array(S.length);
      for (let i = 0; i < S.length; i++) strHit[i] = S[i].toLowerCase().includes(ql) ? 1 : 0;
    }
    let li = 0, i = 0, idx = [];
    return new Promise((resolve) => {
      function chunk() {
        if (job !== searchJob) { resolve(-1); return; }
        const t = performance.now();
        while (li < lanes.length && performance.now() - t < 10) {
          const L = lanes[li], T = L.T, n = L.n;
          if (!L.ready) decodeLane(L);
          const end = Math.min(n, i + 32768);
          if (gm) { /* Global Idx N: the N-th command of every engine lane */
            if (L.kind !== 'Layer' && L.core >= 0 && wantG >= 0 && wantG < n) idx.push(wantG);
            i = n;
          } else if (want >= 0) {
            const c = col(T, 'cmd');
            if (isCol(c)) { for (; i < end; i++) if (c[i] === want) idx.push(i); }
            else { if (c === want) for (; i < end; i++) idx.push(i); i = end; }
          } else {
            const nm = col(T, 'nm'), ty = col(T, 'ty'), ly = col(T, 'ly');
            const nmA = isCol(nm), tyA = isCol(ty), lyA = isCol(ly), LN = LY.name, LT = LY.type;
            for (; i < end; i++) {
              const l = lyA ? ly[i] : ly || 0;
              if (strHit[nmA ? nm[i] : nm || 0] || strHit[tyA ? ty[i] : ty || 0] || (l > 0 && (strHit[LN[l - 1]] || strHit[LT[l - 1]]))) idx.push(i);
            }
          }
          if (i >= n) {
            if (idx.length) markLane(L, Int32Array.from(idx));
            matchCount += idx.length;
            idx = [];
            li++;
            i = 0;
          }
        }
        if (li < lanes.length) {
          info.textContent = 'searching\u2026 ' + (matchCount + idx.length) + ' so far';
          setTimeout(chunk, 0);
          return;
        }
        info.textContent = matchCount ? matchCount + ' match' + (matchCount > 1 ? 'es' : '') : 'no match';
        if (matchCount) nextMatch();
        dirty = true;
        schedule();
        resolve(matchCount);
      }
      chunk();
    });
  }
  function markLane(L, arr) {
    L.mark = arr;
    /* Outlines only for what is visible, at most 2000 per lane. */
    L.markVisible = function* () {
      let c = 0;
      for (let j = lowerBound2(L, arr, view.t0 - L.maxDur); j < arr.length && c < 2000; j++) {
        const k = arr[j];
        if (L.start[k] > view.t1) break;
        if (L.end[k] >= view.t0) { c++; yield k; }
      }
    };
  }
  function lowerBound2(L, arr, v) {
    let lo = 0, hi = arr.length;
    while (lo < hi) { const m = (lo + hi) >>> 1; if (L.start[arr[m]] < v) lo = m + 1; else hi = m; }
    return lo;
  }
  function jumpTo(hit) {
    const s = hit.L.start[hit.i], e = hit.L.end[hit.i];
    const span = Math.max((e - s) * 6, Math.min(view.t1 - view.t0, spanNs / 20), 200);
    setView((s + e) / 2 - span / 2, (s + e) / 2 + span / 2);
    pin(hit);
  }
  /* The next match in time order after the cursor (wrapping), and its rank. */
  function nextMatch() {
    if (!matchCount) return;
    let best = null;
    const t = cursor ? cursor.t : -Infinity, cl = cursor ? cursor.li : -1, ci = cursor ? cursor.i : -1;
    for (const L of lanes) {
      if (!L.mark) continue;
      const arr = L.mark;
      let j = lowerBound2(L, arr, t);
      while (j < arr.length && L.start[arr[j]] === t && (L.i < cl || (L.i === cl && arr[j] <= ci))) j++;
      if (j < arr.length) {
        const st = L.start[arr[j]];
        if (!best || st < best.t || (st === best.t && L.i < best.li)) best = { t: st, li: L.i, i: arr[j], L };
      }
    }
    if (!best) { cursor = null; matchPos = -1; nextMatch(); return; }
    cursor = best;
    matchPos = (matchPos + 1) % matchCount;
    jumpTo({ L: best.L, i: best.i });
    $('search-info').textContent = matchPos + 1 + ' / ' + matchCount;
  }
  $('search').addEventListener('keydown', (ev) => {
    if (ev.key === 'Enter') {
      if (ev.target.value.trim() !== lastQuery) search(ev.target.value);
      else nextMatch();
    }
  });
  /* Typing searches as you go (after a short pause); Enter walks the matches. */
  let typeTimer = 0;
  $('search').addEventListener('input', (ev) => {
    clearTimeout(typeTimer);
    typeTimer = setTimeout(() => { if (ev.target.value.trim() !== lastQuery) search(ev.target.value); }, 250);
  });

