# The client matrix's workload through redis-rb (Debian's ruby-redis): `ruby redis_rb.rb HOST
# PORT PREFIX`. Prints one "PASS step", "FAIL step: why" or "SKIP step: why" line per step and
# exits 1 when a step failed. Every key and channel starts with PREFIX.
require "digest/sha1"
require "redis"

HOST, PORT, P = ARGV[0], ARGV[1].to_i, ARGV[2]
$stdout.sync = true
$failed = false

def client
  Redis.new(host: HOST, port: PORT, timeout: 60)
end

R = client

def check(cond, what)
  raise what unless cond
end

def step(name)
  yield
  puts "PASS #{name}"
rescue StandardError => e
  $failed = true
  puts "FAIL #{name}: #{e.class}: #{e.message}"
end

step("strings") do
  R.set("#{P}s", "hello")
  check(R.append("#{P}s", " world") == 11, "APPEND")
  check(R.get("#{P}s") == "hello world", "GET")
  check(R.incrby("#{P}n", 5) == 5, "INCRBY")
  R.set("#{P}t", "v", ex: 100)
  check((1..100).cover?(R.ttl("#{P}t")), "TTL")
end

step("hashes") do
  check(R.hset("#{P}h", "f1", "v1", "f2", "v2") == 2, "HSET")
  check(R.hgetall("#{P}h") == { "f1" => "v1", "f2" => "v2" }, "HGETALL")
  check(R.hincrby("#{P}h", "n", 3) == 3, "HINCRBY")
  check(R.hdel("#{P}h", "f1") == 1, "HDEL")
  check(R.hlen("#{P}h") == 2, "HLEN")
end

step("lists_blpop") do
  check(R.rpush("#{P}l", %w[a b c]) == 3, "RPUSH")
  check(R.lrange("#{P}l", 0, -1) == %w[a b c], "LRANGE")
  check(R.blpop("#{P}l", timeout: 5) == ["#{P}l", "a"], "BLPOP")
  check(R.blpop(["#{P}empty", "#{P}l"], timeout: 5) == ["#{P}l", "b"], "BLPOP 2 keys")
  # A BLPOP that blocks until another connection pushes.
  other = client
  waiter = Thread.new { R.blpop("#{P}wait", timeout: 60) }
  begin
    deadline = Time.now + 60
    until other.call("CLIENT", "LIST").include?(" flags=b ")
      check(Time.now < deadline && waiter.alive?, "BLPOP never blocked")
      sleep 0.01
    end
    other.rpush("#{P}wait", "late")
    check(waiter.join(120)&.value == ["#{P}wait", "late"], "woken BLPOP")
  ensure
    other.close
  end
end

step("sorted_sets") do
  check(R.zadd("#{P}z", [[1, "a"], [2, "b"], [3, "c"]]) == 3, "ZADD")
  check(R.zincrby("#{P}z", 10, "a") == 11.0, "ZINCRBY")
  check(R.zrange("#{P}z", 0, -1, with_scores: true) == [["b", 2.0], ["c", 3.0], ["a", 11.0]],
        "ZRANGE WITHSCORES")
  check(R.zrangebyscore("#{P}z", 2, 3) == %w[b c], "ZRANGEBYSCORE")
  check(R.zrank("#{P}z", "a") == 2, "ZRANK")
  check(R.zscore("#{P}z", "c") == 3.0, "ZSCORE")
end

step("scan") do
  R.mset(*(0...300).flat_map { |i| ["#{P}scan:#{i}", i.to_s] })
  cursor, seen, calls = "0", [], 0
  loop do
    cursor, keys = R.scan(cursor, match: "#{P}scan:*", count: 20)
    seen.concat(keys)
    calls += 1
    check(calls < 10_000, "SCAN did not reach cursor 0")
    break if cursor == "0"
  end
  check(calls > 1, "one SCAN call returned everything")
  check(seen.uniq.sort == (0...300).map { |i| "#{P}scan:#{i}" }.sort, "SCAN keys")
end

step("hscan") do
  R.mapped_hmset("#{P}bigh", (0...600).to_h { |i| ["f#{i}", i.to_s] })
  cursor, seen, calls = "0", {}, 0
  loop do
    cursor, pairs = R.hscan("#{P}bigh", cursor, count: 20)
    pairs.each { |f, v| seen[f] = v }
    calls += 1
    check(calls < 10_000, "HSCAN did not reach cursor 0")
    break if cursor == "0"
  end
  check(calls > 1, "one HSCAN call returned everything")
  check(seen == (0...600).to_h { |i| ["f#{i}", i.to_s] }, "HSCAN fields")
end

step("pipeline") do
  replies = R.pipelined { |pipe| 1000.times { pipe.incr("#{P}pipe") } }
  check(replies == (1..1000).to_a, "1,000 INCR replies")
  check(R.get("#{P}pipe") == "1000", "GET after the pipeline")
end

step("multi_watch") do
  check(R.multi { |tx| 2.times { tx.incr("#{P}tx") } } == [1, 2], "MULTI/EXEC")
  other = client
  begin
    aborted = R.watch("#{P}w") do |rd|
      other.set("#{P}w", "theirs")
      rd.multi { |tx| tx.set("#{P}w", "mine") }
    end
    check(aborted.nil?, "EXEC after a WATCH conflict returned #{aborted.inspect}")
    check(R.get("#{P}w") == "theirs", "value after the aborted EXEC")
    done = R.watch("#{P}w") { |rd| rd.multi { |tx| tx.set("#{P}w", "mine") } }
    check(done == ["OK"], "EXEC without a conflict")
    check(R.get("#{P}w") == "mine", "value after EXEC")
  ensure
    other.close
  end
end

step("pubsub") do
  sub = client
  got = nil
  begin
    sub.subscribe_with_timeout(30, "#{P}chan") do |on|
      on.subscribe { |_ch, _n| check(R.publish("#{P}chan", "hi") == 1, "PUBLISH receivers") }
      on.message do |ch, msg|
        got = [ch, msg]
        sub.unsubscribe
      end
    end
  ensure
    sub.close
  end
  check(got == ["#{P}chan", "hi"], "message #{got.inspect}")
end

step("eval_evalsha") do
  body = "return redis.call('INCRBY', KEYS[1], ARGV[1]) -- #{P}"
  sha = Digest::SHA1.hexdigest(body)
  begin
    R.evalsha(sha, keys: ["#{P}ev"], argv: [2])
    raise "EVALSHA of an unknown script succeeded"
  rescue Redis::CommandError => e
    check(e.message.start_with?("NOSCRIPT"), e.message)
  end
  check(R.eval(body, keys: ["#{P}ev"], argv: [2]) == 2, "EVAL")
  check(R.evalsha(sha, keys: ["#{P}ev"], argv: [3]) == 5, "EVALSHA")
end

step("consumer_group") do
  st = "#{P}st"
  R.xgroup(:create, st, "g", "$", mkstream: true)
  ids = (0...3).map { |i| R.xadd(st, { n: i.to_s }) }
  got = R.xreadgroup("g", "c1", st, ">", count: 10)
  check(got[st].map(&:first) == ids, "XREADGROUP")
  check(R.xack(st, "g", ids[0]) == 1, "XACK")
  summary = R.xpending(st, "g")
  check(summary["size"] == 2 && summary["min_entry_id"] == ids[1], "XPENDING summary")
  detail = R.xpending(st, "g", "-", "+", 10)
  check(detail.map { |d| d["entry_id"] } == ids[1..], "XPENDING range")
  claimed = R.call("XAUTOCLAIM", st, "g", "c2", 0, "0-0")
  check(claimed[0] == "0-0" && claimed[1].map(&:first) == ids[1..], "XAUTOCLAIM")
  check(R.xpending(st, "g")["consumers"] == { "c2" => "2" }, "XPENDING after XAUTOCLAIM")
end

step("xinfo_stream_full") do
  info = R.call("XINFO", "STREAM", "#{P}st", "FULL").each_slice(2).to_h
  check(info["length"] == 3, "length")
  group = info["groups"][0].each_slice(2).to_h
  check(group["name"] == "g" && group["pel-count"] == 2, "group")
  names = group["consumers"].map { |c| c.each_slice(2).to_h["name"] }
  check(names == %w[c1 c2], "consumers #{names.inspect}")
end

puts "SKIP resp3: redis-rb #{Redis::VERSION} speaks RESP2 only (RESP3 came with redis-rb 5)"
R.close
exit($failed ? 1 : 0)
