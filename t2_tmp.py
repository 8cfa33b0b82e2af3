import time, re
from metrics.io import DATA_DIR, read_jsonl
from metrics.text import WORD
from variants.topic import default_assets, tagger, tag_words
a=[r['source'] for r in read_jsonl(DATA_DIR/'bbc_summary'/'train.jsonl')[:100]]
A=default_assets(); t=A.terms(A.space.topics[0])
tg=tagger(t)
body = tg._pattern.pattern.split('(?:',1)[1]
ref=[tag_words(x,t) for x in a]
p5 = re.compile('(?:' + body)   # trie + lookaheads, case-sensitive, on lowered text
def tag5(x):
    low = x.lower()
    out, last = [], 0
    for m in p5.finditer(low):
        s = m.start()
        if s and (low[s-1] in ALNUM or (low[s-1] in "'’" and s > 1 and low[s-2] in ALNUM)):
            continue
        out += (x[last:s], "[TAG] ", x[s:m.end()], " [TAG]")
        last = m.end()
    out.append(x[last:])
    return "".join(out)
ALNUM = frozenset("abcdefghijklmnopqrstuvwxyz0123456789")
low6 = re.compile(tg._pattern.pattern)
def tag6(x):
    low = x.lower(); out=[]; last=0
    for m in low6.finditer(low):
        s, e = m.span(); out += (x[last:s], "[TAG] ", x[s:e], " [TAG]"); last = e
    out.append(x[last:]); return "".join(out)
print(tag5(a[0]) == ref[0], [tag5(x) for x in a]==ref, [tag6(x) for x in a]==ref)
def tm(f):
    best=1e9
    for _ in range(7):
        s=time.perf_counter(); [f(x) for x in a]; best=min(best,time.perf_counter()-s)
    return round(best*1000,2)
print('t5', tm(tag5), 't6', tm(tag6), 'current', tm(lambda x: tg._pattern.sub('[TAG] \\g<0> [TAG]', x)), 'tag_words', tm(lambda x: tag_words(x,t)), 'lower', tm(str.lower))
