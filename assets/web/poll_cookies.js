(() => {
  const jar = (n) => (document.cookie.match(new RegExp("(?:^|; )" + n + "=([^;]*)")) || [])[1];
  const put = (n, v, age) => { document.cookie = n + "=" + v + "; max-age=" + age + "; path=/; SameSite=Strict"; };
  const send = %s;
  for (const [name, [value, age, keep]] of Object.entries(send)) {
    const had = jar(name);
    if (keep && had && had !== value) {
      if (!sessionStorage.getItem("ol-reloaded")) { sessionStorage.setItem("ol-reloaded", "1"); location.reload(); }
    } else if (!keep || !had) { put(name, value, age); }
  }
})();
