// Node's default server for tests/integration/dual_stack.sh:
// listen(PORT) with no host, a dual-stack :: socket. Answers "node" and
// exits after SECONDS. Usage: node serve.js PORT SECONDS
const http = require('http');
const [port, secs] = process.argv.slice(2).map(Number);
const srv = http.createServer((req, res) => res.end('node\n'));
srv.listen(port, () => console.log('listening', JSON.stringify(srv.address())));
setTimeout(() => srv.close(() => process.exit(0)), secs * 1000);
