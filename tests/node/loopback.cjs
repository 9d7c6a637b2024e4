// Preloaded (`node --require`) into servers the tests run that listen on every interface
// (server-everything's Streamable HTTP mode calls `app.listen(PORT)` with no host): every
// `listen` given a port and no host binds 127.0.0.1 instead, so tests serve loopback only.
const net = require("node:net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    if (typeof args[1] !== "string") {
      args.splice(1, 0, "127.0.0.1");
    }
  } else if (args[0] && typeof args[0] === "object" && args[0].port !== undefined && !args[0].host) {
    args[0] = { ...args[0], host: "127.0.0.1" };
  }
  return listen.apply(this, args);
};
