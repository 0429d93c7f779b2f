// recordWire makes transport log every message both ways, as it carries
// them, into the array it returns: the tests check the wire, not what the
// SDK makes of it.
export function recordWire(transport) {
  const wire = [];
  const send = transport.send.bind(transport);
  transport.send = (msg, ...rest) => {
    wire.push({ dir: "out", msg });
    return send(msg, ...rest);
  };
  let onmessage;
  Object.defineProperty(transport, "onmessage", {
    configurable: true,
    get: () => onmessage,
    set: (fn) => {
      onmessage = fn && ((msg, ...rest) => {
        wire.push({ dir: "in", msg });
        return fn(msg, ...rest);
      });
    },
  });
  return wire;
}
