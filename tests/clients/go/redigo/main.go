// The client matrix's workload through redigo: `redigo HOST PORT PREFIX`.
//
// Prints one "PASS step", "FAIL step: why" or "SKIP step: why" line per step and exits 1
// when a step failed. Every key and channel starts with PREFIX.
package main

import (
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

var (
	addr   string
	p      string
	c      redis.Conn
	failed bool
)

func dial() redis.Conn {
	conn, err := redis.Dial("tcp", addr, redis.DialReadTimeout(60*time.Second),
		redis.DialWriteTimeout(60*time.Second))
	if err != nil {
		panic(err)
	}
	return conn
}

func check(cond bool, what string, args ...interface{}) {
	if !cond {
		panic(fmt.Sprintf(what, args...))
	}
}

func must(v interface{}, err error) interface{} {
	if err != nil {
		panic(err)
	}
	return v
}

func step(name string, fn func()) {
	defer func() {
		if e := recover(); e != nil {
			failed = true
			fmt.Printf("FAIL %s: %v\n", name, e)
		}
	}()
	fn()
	fmt.Printf("PASS %s\n", name)
}

func do(cmd string, args ...interface{}) interface{} {
	return must(c.Do(cmd, args...))
}

func str(v interface{}) string { return must(redis.String(v, nil)).(string) }
func i64(v interface{}) int64  { return must(redis.Int64(v, nil)).(int64) }
func strs(v interface{}) []string {
	return must(redis.Strings(v, nil)).([]string)
}

// fields turns a flat [k1, v1, k2, v2, ...] reply into a map.
func fields(v interface{}) map[string]interface{} {
	vals := must(redis.Values(v, nil)).([]interface{})
	m := map[string]interface{}{}
	for i := 0; i+1 < len(vals); i += 2 {
		m[str(vals[i])] = vals[i+1]
	}
	return m
}

// waitBlocked returns once a client is blocked (CLIENT LIST flags=b; its cmd= would name an
// earlier BLPOP that has returned too).
func waitBlocked(conn redis.Conn) {
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(must(redis.String(conn.Do("CLIENT", "LIST"))).(string), " flags=b ") {
		check(time.Now().Before(deadline), "BLPOP never blocked")
		time.Sleep(10 * time.Millisecond)
	}
}

func main() {
	addr, p = os.Args[1]+":"+os.Args[2], os.Args[3]
	c = dial()
	defer c.Close()

	step("strings", func() {
		do("SET", p+"s", "hello")
		check(i64(do("APPEND", p+"s", " world")) == 11, "APPEND")
		check(str(do("GET", p+"s")) == "hello world", "GET")
		check(i64(do("INCRBY", p+"n", 5)) == 5, "INCRBY")
		do("SET", p+"t", "v", "EX", 100)
		ttl := i64(do("TTL", p+"t"))
		check(ttl > 0 && ttl <= 100, "TTL %d", ttl)
	})
	step("hashes", func() {
		check(i64(do("HSET", p+"h", "f1", "v1", "f2", "v2")) == 2, "HSET")
		m := must(redis.StringMap(do("HGETALL", p+"h"), nil)).(map[string]string)
		check(reflect.DeepEqual(m, map[string]string{"f1": "v1", "f2": "v2"}), "HGETALL %v", m)
		check(i64(do("HINCRBY", p+"h", "n", 3)) == 3, "HINCRBY")
		check(i64(do("HDEL", p+"h", "f1")) == 1, "HDEL")
		check(i64(do("HLEN", p+"h")) == 2, "HLEN")
	})
	step("lists_blpop", func() {
		check(i64(do("RPUSH", p+"l", "a", "b", "c")) == 3, "RPUSH")
		check(reflect.DeepEqual(strs(do("LRANGE", p+"l", 0, -1)), []string{"a", "b", "c"}), "LRANGE")
		check(reflect.DeepEqual(strs(do("BLPOP", p+"l", 5)), []string{p + "l", "a"}), "BLPOP")
		got := strs(do("BLPOP", p+"empty", p+"l", 5))
		check(reflect.DeepEqual(got, []string{p + "l", "b"}), "BLPOP 2 keys: %v", got)
		// A BLPOP that blocks until another connection pushes.
		other := dial()
		defer other.Close()
		woken := make(chan interface{}, 1)
		go func() {
			reply, err := redis.Strings(c.Do("BLPOP", p+"wait", 60))
			if err != nil {
				woken <- err
				return
			}
			woken <- reply
		}()
		waitBlocked(other)
		must(other.Do("RPUSH", p+"wait", "late"))
		select {
		case reply := <-woken:
			check(reflect.DeepEqual(reply, []string{p + "wait", "late"}), "woken BLPOP: %v", reply)
		case <-time.After(120 * time.Second):
			panic("BLPOP was not woken")
		}
	})
	step("sorted_sets", func() {
		check(i64(do("ZADD", p+"z", 1, "a", 2, "b", 3, "c")) == 3, "ZADD")
		check(str(do("ZINCRBY", p+"z", 10, "a")) == "11", "ZINCRBY")
		got := strs(do("ZRANGE", p+"z", 0, -1, "WITHSCORES"))
		check(reflect.DeepEqual(got, []string{"b", "2", "c", "3", "a", "11"}), "ZRANGE %v", got)
		check(reflect.DeepEqual(strs(do("ZRANGEBYSCORE", p+"z", 2, 3)), []string{"b", "c"}), "ZRANGEBYSCORE")
		check(i64(do("ZRANK", p+"z", "a")) == 2, "ZRANK")
		check(must(redis.Float64(do("ZSCORE", p+"z", "c"), nil)).(float64) == 3.0, "ZSCORE")
	})
	step("scan", func() {
		args := []interface{}{}
		for i := 0; i < 300; i++ {
			args = append(args, fmt.Sprintf("%sscan:%d", p, i), i)
		}
		do("MSET", args...)
		seen, calls, cursor := map[string]bool{}, 0, "0"
		for {
			vals := must(redis.Values(do("SCAN", cursor, "MATCH", p+"scan:*", "COUNT", 20), nil)).([]interface{})
			cursor = str(vals[0])
			for _, k := range strs(vals[1]) {
				seen[k] = true
			}
			calls++
			check(calls < 10000, "SCAN did not reach cursor 0")
			if cursor == "0" {
				break
			}
		}
		check(calls > 1, "one SCAN call returned everything")
		check(len(seen) == 300, "SCAN saw %d keys", len(seen))
	})
	step("hscan", func() {
		args := []interface{}{p + "bigh"}
		for i := 0; i < 600; i++ {
			args = append(args, fmt.Sprintf("f%d", i), i)
		}
		do("HSET", args...)
		seen, calls, cursor := map[string]string{}, 0, "0"
		for {
			vals := must(redis.Values(do("HSCAN", p+"bigh", cursor, "COUNT", 20), nil)).([]interface{})
			cursor = str(vals[0])
			kv := strs(vals[1])
			for i := 0; i+1 < len(kv); i += 2 {
				seen[kv[i]] = kv[i+1]
			}
			calls++
			check(calls < 10000, "HSCAN did not reach cursor 0")
			if cursor == "0" {
				break
			}
		}
		check(calls > 1, "one HSCAN call returned everything")
		check(len(seen) == 600 && seen["f599"] == "599", "HSCAN saw %d fields", len(seen))
	})
	step("pipeline", func() {
		for i := 0; i < 1000; i++ {
			must(nil, c.Send("INCR", p+"pipe"))
		}
		must(nil, c.Flush())
		for i := 1; i <= 1000; i++ {
			n := i64(must(c.Receive()))
			check(n == int64(i), "reply %d is %d", i, n)
		}
		check(str(do("GET", p+"pipe")) == "1000", "GET after the pipeline")
	})
	step("multi_watch", func() {
		c.Send("MULTI")
		c.Send("INCR", p+"tx")
		c.Send("INCR", p+"tx")
		got := must(redis.Int64s(c.Do("EXEC"))).([]int64)
		check(reflect.DeepEqual(got, []int64{1, 2}), "EXEC %v", got)
		other := dial()
		defer other.Close()
		do("WATCH", p+"w")
		must(other.Do("SET", p+"w", "theirs"))
		c.Send("MULTI")
		c.Send("SET", p+"w", "mine")
		reply, err := c.Do("EXEC")
		check(err == nil && reply == nil, "EXEC after a WATCH conflict: %v %v", reply, err)
		check(str(do("GET", p+"w")) == "theirs", "value after the aborted EXEC")
		do("WATCH", p+"w")
		c.Send("MULTI")
		c.Send("SET", p+"w", "mine")
		ok := strs(do("EXEC"))
		check(reflect.DeepEqual(ok, []string{"OK"}), "EXEC without a conflict: %v", ok)
		check(str(do("GET", p+"w")) == "mine", "value after EXEC")
	})
	step("pubsub", func() {
		sub := dial()
		defer sub.Close()
		psc := redis.PubSubConn{Conn: sub}
		must(nil, psc.Subscribe(p+"chan"))
		first := psc.ReceiveWithTimeout(30 * time.Second)
		s, ok := first.(redis.Subscription)
		check(ok && s.Kind == "subscribe" && s.Channel == p+"chan", "confirmation %v", first)
		check(i64(do("PUBLISH", p+"chan", "hi")) == 1, "PUBLISH receivers")
		msg := psc.ReceiveWithTimeout(30 * time.Second)
		m, ok := msg.(redis.Message)
		check(ok && m.Channel == p+"chan" && string(m.Data) == "hi", "message %v", msg)
		must(nil, psc.Unsubscribe())
	})
	step("eval_evalsha", func() {
		body := "return redis.call('INCRBY', KEYS[1], ARGV[1]) -- " + p
		sum := sha1.Sum([]byte(body))
		sha := hex.EncodeToString(sum[:])
		_, err := c.Do("EVALSHA", sha, 1, p+"ev", 2)
		check(err != nil && strings.HasPrefix(err.Error(), "NOSCRIPT"), "EVALSHA unknown: %v", err)
		check(i64(do("EVAL", body, 1, p+"ev", 2)) == 2, "EVAL")
		check(i64(do("EVALSHA", sha, 1, p+"ev", 3)) == 5, "EVALSHA")
		// redigo's Script.Do: EVALSHA, and EVAL on NOSCRIPT.
		script := redis.NewScript(0, "return ARGV[1] .. '"+p+"'")
		check(str(must(script.Do(c, "x"))) == "x"+p, "Script.Do")
	})
	step("consumer_group", func() {
		st := p + "st"
		do("XGROUP", "CREATE", st, "g", "$", "MKSTREAM")
		ids := []string{}
		for i := 0; i < 3; i++ {
			ids = append(ids, str(do("XADD", st, "*", "n", i)))
		}
		streams := must(redis.Values(do("XREADGROUP", "GROUP", "g", "c1", "COUNT", 10, "STREAMS", st, ">"), nil)).([]interface{})
		entries := must(redis.Values(must(redis.Values(streams[0], nil)).([]interface{})[1], nil)).([]interface{})
		check(len(entries) == 3, "XREADGROUP %d entries", len(entries))
		check(i64(do("XACK", st, "g", ids[0])) == 1, "XACK")
		summary := must(redis.Values(do("XPENDING", st, "g"), nil)).([]interface{})
		check(i64(summary[0]) == 2 && str(summary[1]) == ids[1], "XPENDING summary")
		detail := must(redis.Values(do("XPENDING", st, "g", "-", "+", 10), nil)).([]interface{})
		check(len(detail) == 2, "XPENDING range")
		claimed := must(redis.Values(do("XAUTOCLAIM", st, "g", "c2", 0, "0-0"), nil)).([]interface{})
		moved := must(redis.Values(claimed[1], nil)).([]interface{})
		check(str(claimed[0]) == "0-0" && len(moved) == 2, "XAUTOCLAIM")
		after := must(redis.Values(do("XPENDING", st, "g"), nil)).([]interface{})
		owners := strs(must(redis.Values(after[3], nil)).([]interface{})[0])
		check(reflect.DeepEqual(owners, []string{"c2", "2"}), "owners %v", owners)
	})
	step("xinfo_stream_full", func() {
		info := fields(do("XINFO", "STREAM", p+"st", "FULL"))
		check(i64(info["length"]) == 3, "length")
		groups := must(redis.Values(info["groups"], nil)).([]interface{})
		g := fields(groups[0])
		check(str(g["name"]) == "g" && i64(g["pel-count"]) == 2, "group")
		names := []string{}
		for _, cons := range must(redis.Values(g["consumers"], nil)).([]interface{}) {
			names = append(names, str(fields(cons)["name"]))
		}
		sort.Strings(names)
		check(reflect.DeepEqual(names, []string{"c1", "c2"}), "consumers %v", names)
	})
	fmt.Println("SKIP resp3: redigo speaks RESP2 only")
	if failed {
		os.Exit(1)
	}
}
