import socket, sys, re, os, statistics
# Issue #31 probe: server time per script call from INFO commandstats of a PRIVATE redis-server (it runs
# CONFIG RESETSTAT). Usage: python3 redis_script_cost.py PORT KEYS SAMPLES [name=variant.lua ...]; a variant
# named acquire_* is run in place of fence-guard's acquire on keys of its own, then released by release.lua.
HERE=os.path.dirname(os.path.abspath(__file__))
D=os.path.join(HERE,'../../../fence-guard-redis/src/main/resources/dev/fenceguard/redis/internal/')
V=dict(FLOORED='true',EPOCH_US='1735689600000000',EPOCH_MS='1735689600000',PER_MS='100',US_PER_FENCE='10',MAX_WAIT='100',
       SPIN_LIMIT='100000',MAX_FENCE='900000000000000',MARGIN_MS='300000',LEGACY_RESTORE_MS='600000')
def load(name, d=D):
    s=open(d+name+'.lua').read().replace('${DIGITS}', open(D+'digits.lua').read())
    for k,v in V.items(): s=s.replace('${'+k+'}',v)
    assert '${' not in s; return s
PORT=int(sys.argv[1]); N=int(sys.argv[2]); SAMPLES=int(sys.argv[3]); EXTRA=sys.argv[4:]
sock=socket.create_connection(('127.0.0.1',PORT)); f=sock.makefile('rb')
def enc(*a):
    out=[b'*%d\r\n'%len(a)]
    for x in a:
        x=x if isinstance(x,bytes) else str(x).encode(); out.append(b'$%d\r\n%s\r\n'%(len(x),x))
    return b''.join(out)
def read():
    l=f.readline(); t=l[:1]; r=l[1:-2]
    if t==b'+': return r.decode()
    if t==b'-': raise Exception(r.decode())
    if t==b':': return int(r)
    if t==b'$':
        n=int(r)
        if n<0: return None
        d=f.read(n+2); return d[:-2].decode()
    if t==b'*':
        n=int(r); return None if n<0 else [read() for _ in range(n)]
def cmd(*a): sock.sendall(enc(*a)); return read()
def pipe(cmds, check):
    for i in range(0,len(cmds),500):
        b=cmds[i:i+500]; sock.sendall(b''.join(enc(*c) for c in b))
        for c in b: check(read())
# 'split': acquire.lua with the common path's three numbers printed as two '%d' halves below 1e9 (format_cost.lua
# prices the forms) and math.floor / string.format held in locals: what is left to gain in its Lua (derived here).
def split(a):
    b=a.replace("local t = redis.call('TIME')", """local floor, format = math.floor, string.format
local function digits(n)
  local hi = floor(n / 1000000000)
  if hi == 0 then
    return format('%d', n)
  end
  return format('%d%09d', hi, n - hi * 1000000000)
end
local t = redis.call('TIME')""", 1)
    b=b.replace("local s = string.format('%.0f', start)\nlocal e = string.format('%.0f', expiry)", "local s = digits(start)\nlocal e = digits(expiry)")
    b=b.replace("string.format('%.0f', keep + ", "digits(keep + ")
    b=b.replace('math.floor(', 'floor(').replace('string.format(', 'format(')
    assert b.count('digits(')==4, 'acquire.lua prints with digits.lua since issue #31 made split: compare with acquire_before'
    return b
scripts={'acquire':load('acquire'),'release':load('release')}
for extra in EXTRA:  # name=path
    n,p=extra.split('=')
    # 'nopcall': acquire.lua itself with its one pcall made a plain call (derived here rather than copied).
    scripts[n]=load('acquire').replace("local ok, counter = pcall(redis.call, 'SET'", "local ok, counter = true, redis.call('SET'") \
        if p=='nopcall' else split(load('acquire')) if p=='split' else open(p).read()
    scripts[n]=scripts[n].replace('${DIGITS}', open(D+'digits.lua').read())
    for k,v in V.items(): scripts[n]=scripts[n].replace('${'+k+'}',v)
MIN="if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return redis.call('INCR', KEYS[2]) end return 0"
CAD="if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
sha={k:cmd('SCRIPT','LOAD',v) for k,v in scripts.items()}
sha['min']=cmd('SCRIPT','LOAD',MIN); sha['cad']=cmd('SCRIPT','LOAD',CAD)
sha['empty']=cmd('SCRIPT','LOAD','return 0'); sha['time']=cmd('SCRIPT','LOAD',"redis.call('TIME') return 0")
print(cmd('INFO','server').split('redis_version:')[1].split()[0])
def fg(n,tag='fg'): return ['{%s:k%d}:lock'%(tag,n),'{%s:k%d}:fence'%(tag,n)]
def stats():
    s={}
    for l in cmd('INFO','commandstats').splitlines():
        m=re.match(r'cmdstat_(\w+):calls=(\d+),usec=(\d+)',l)
        if m and m.group(1) not in ('info','config'): s[m.group(1)]=(int(m.group(2)),int(m.group(3)))
    return s
def phase(name, cmds, check=lambda r:None):
    cmd('CONFIG','RESETSTAT'); pipe(cmds, check); s=stats()
    ev=s.pop('evalsha',(0,0)); inner=sum(v[1] for v in s.values())
    parts='; '.join('%s %.2f calls %.2f us'%(k,v[0]/N,v[1]/N) for k,v in sorted(s.items()))
    print('  %-22s EVALSHA %.2f us/call, commands %.2f, script own %.2f | %s'%(name,ev[1]/N,inner/N,(ev[1]-inner)/N,parts))
    return ev[1]/N
ids=['id%018d'%n for n in range(N)]
acq=lambda s,tag: [('EVALSHA',sha[s],2,*fg(n,tag),ids[n],30000) for n in range(N)]
rel=lambda s,tag: [('EVALSHA',sha[s],2,*fg(n,tag),ids[n]) for n in range(N)]
ok_acq=lambda r: (r[0]==1) or (_ for _ in ()).throw(Exception('acq %r'%r))
ok1=lambda r: r==1 or (_ for _ in ()).throw(Exception('rel %r'%r))
okpos=lambda r: r>=1 or (_ for _ in ()).throw(Exception('min %r'%r))
variants=[k for k in sha if k.startswith('acquire')]
relvariants=[k for k in sha if k.startswith('release')]
# warm: every key once
for a in variants:
    pipe(acq('acquire',a),ok_acq); pipe(rel('release',a),ok1)
pipe([('EVALSHA',sha['min'],2,*fg(n,'min'),ids[n],30000) for n in range(N)],okpos); pipe(rel('cad','min'),ok1)
res={}
for s in range(SAMPLES):
    print('sample',s+1)
    for a in variants:
        res.setdefault(a,[]).append(phase(a,acq(a,a),ok_acq if a!='acquire_time' else (lambda r:None)))
        res.setdefault('release/'+a,[]).append(phase('release',rel('release',a),ok1 if a=='acquire' else (lambda r:None)))
    for r in relvariants:
        if r=='release': continue
        pipe(acq('acquire','acquire'),ok_acq)
        res.setdefault(r,[]).append(phase(r,rel(r,'acquire'),ok1))
    res.setdefault('min',[]).append(phase('minimal acquire',[('EVALSHA',sha['min'],2,*fg(n,'min'),ids[n],30000) for n in range(N)],okpos))
    res.setdefault('cad',[]).append(phase('compare-and-delete',rel('cad','min'),ok1))
    res.setdefault('empty',[]).append(phase('calib return 0',[('EVALSHA',sha['empty'],2,*fg(n,'x'),'a','b') for n in range(N)]))
    res.setdefault('time',[]).append(phase('calib TIME',[('EVALSHA',sha['time'],2,*fg(n,'x'),'a','b') for n in range(N)]))
print('medians us/call:', {k:round(statistics.median(v),2) for k,v in res.items()}, 'spread', {k:(min(v),max(v)) for k,v in res.items()})
