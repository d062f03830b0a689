function hotLoopJS(n) {
  let s = 0;
  for (let i = 0; i < n; i++) s = (s * 31 + i) % 1000003;
  return s;
}
const rounds = Number(process.argv[2] || 3000);
let acc = 0;
for (let k = 0; k < rounds; k++) acc += hotLoopJS(200000);
console.log(acc > 0 ? "done" : "zero");
