// Exact member texts of a JSON object: signatures and hashes cover the bytes
// as sent (SPEC.md §4.1), so the audit never re-serialises JSON.

/** The raw text of each top-level member value of the JSON object `text`. */
export function rawMembers(text: string): Map<string, string> {
  const out = new Map<string, string>();
  let i = skipWs(text, 0);
  if (text[i] !== '{') throw new Error('not a JSON object');
  i = skipWs(text, i + 1);
  if (text[i] === '}') return out;
  for (;;) {
    if (text[i] !== '"') throw new Error(`expected a member name at ${i}`);
    const keyEnd = skipString(text, i);
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipWs(text, keyEnd);
    if (text[i] !== ':') throw new Error(`expected ':' at ${i}`);
    const start = skipWs(text, i + 1);
    const end = skipValue(text, start);
    if (out.has(key)) throw new Error(`duplicated member ${key}`);
    out.set(key, text.slice(start, end));
    i = skipWs(text, end);
    if (text[i] === ',') {
      i = skipWs(text, i + 1);
      continue;
    }
    if (text[i] === '}') return out;
    throw new Error(`expected ',' or '}' at ${i}`);
  }
}

function skipWs(s: string, i: number): number {
  while (i < s.length && ' \t\n\r'.includes(s[i])) i++;
  return i;
}

function skipString(s: string, i: number): number {
  for (let j = i + 1; j < s.length; j++) {
    if (s[j] === '\\') j++;
    else if (s[j] === '"') return j + 1;
  }
  throw new Error('unterminated string');
}

function skipValue(s: string, i: number): number {
  const c = s[i];
  if (c === '"') return skipString(s, i);
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < s.length; j++) {
      const d = s[j];
      if (d === '"') j = skipString(s, j) - 1;
      else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    throw new Error('unterminated value');
  }
  let j = i;
  while (j < s.length && !',}] \t\n\r'.includes(s[j])) j++;
  if (j === i) throw new Error(`expected a value at ${i}`);
  return j;
}
