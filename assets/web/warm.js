(() => {
  if (window.__olWarm) return;
  window.__olWarm = true;
  const index = document.querySelector('script[type="module"][src*="/static/js/index."]');
  if (!index) return;
  const load = (fs) => Promise.all(fs.map((f) => import(new URL(f, index.src).href).catch(() => null)));
  const [first, rest] = %s;
  load(first).then(() => load(rest));
})();
