  /* ---------------------------------------------------------------- capture lanes */
  /* A capture's page only (its script is util, lanes, cap_lanes, overview, timeline, cap_table,
   * search, cap_page, main: src/writers/html/CMakeLists.txt). Thread lanes are flame charts:
   * one row per nesting depth (step -> activity -> operator -> ...; the writer's "dp" column,
   * at most 16 rows), 18 px each so a label fits; a counter series is a lane of kind "Counter"
   * right under its thread's, a step chart 40 px tall (block height = the value between the
   * series' lowest and highest, or 0 when lower: the lane's lo and hi). The layout in
   * timeline.js reads each lane's height. */
  const CAP = D.capture;
  const CAP_ROW_H = 18, CAP_COUNTER_H = 40;
  for (const L of lanes) {
    if (L.kind === 'Counter') {
      L.rowH = CAP_COUNTER_H;
      L.h = CAP_COUNTER_H + 4;
      L.lo = 0;
      L.hi = 0;
      for (const v of L.T.vals) if (v !== null) { L.lo = Math.min(L.lo, v); L.hi = Math.max(L.hi, v); }
    }
    else if (L.kind === 'Thread') { L.rowH = CAP_ROW_H; L.h = L.rows * CAP_ROW_H + 4; }
  }

