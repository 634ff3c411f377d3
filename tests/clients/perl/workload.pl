#!/usr/bin/perl
# The client matrix's workload through Redis.pm (Debian's libredis-perl) or Redis::Fast
# (libredis-fast-perl), which share one API: `perl workload.pl Redis|Redis::Fast HOST PORT
# PREFIX`. Prints one "PASS step", "FAIL step: why" or "SKIP step: why" line per step and exits
# 1 when a step failed. Every key and channel starts with PREFIX.
use strict;
use warnings;
use Digest::SHA qw(sha1_hex);
use POSIX ();

my ($lib, $host, $port, $p) = @ARGV;
eval "require $lib; 1" or die $@;
$| = 1;
my $failed = 0;

sub client { return $lib->new(server => "$host:$port", read_timeout => 60, write_timeout => 60) }
my $r = client();

sub check { my ($cond, $what) = @_; die "$what\n" unless $cond; }

sub step {
    my ($name, $fn) = @_;
    if (eval { $fn->(); 1 }) {
        print "PASS $name\n";
    } else {
        my $err = $@;
        chomp $err;
        $failed = 1;
        print "FAIL $name: $err\n";
    }
}

sub same { return join("\x00", map { $_ // '<undef>' } @{$_[0]}) eq join("\x00", map { $_ // '<undef>' } @{$_[1]}) }

sub pairs { my %h = @{$_[0]}; return \%h }

step('strings', sub {
    $r->set("${p}s", 'hello');
    check($r->append("${p}s", ' world') == 11, 'APPEND');
    check($r->get("${p}s") eq 'hello world', 'GET');
    check($r->incrby("${p}n", 5) == 5, 'INCRBY');
    $r->set("${p}t", 'v', 'EX', 100);
    my $ttl = $r->ttl("${p}t");
    check($ttl > 0 && $ttl <= 100, "TTL $ttl");
});

step('hashes', sub {
    check($r->hset("${p}h", f1 => 'v1', f2 => 'v2') == 2, 'HSET');
    my %h = $r->hgetall("${p}h");
    check(keys %h == 2 && $h{f1} eq 'v1' && $h{f2} eq 'v2', 'HGETALL');
    check($r->hincrby("${p}h", 'n', 3) == 3, 'HINCRBY');
    check($r->hdel("${p}h", 'f1') == 1, 'HDEL');
    check($r->hlen("${p}h") == 2, 'HLEN');
});

step('lists_blpop', sub {
    check($r->rpush("${p}l", qw(a b c)) == 3, 'RPUSH');
    check(same([$r->lrange("${p}l", 0, -1)], [qw(a b c)]), 'LRANGE');
    check(same([$r->blpop("${p}l", 5)], ["${p}l", 'a']), 'BLPOP');
    check(same([$r->blpop("${p}empty", "${p}l", 5)], ["${p}l", 'b']), 'BLPOP 2 keys');
    # A BLPOP that blocks until another connection pushes: a child process pushes once CLIENT
    # LIST flags a client blocked (Redis::Fast sends a command given a callback only when its
    # replies are awaited, so this process cannot do both).
    my $pid = fork // die "fork: $!";
    if ($pid == 0) {
        my $blocked = eval {
            my $other = client();
            my ($seen, $deadline) = (0, time + 60);
            select(undef, undef, undef, 0.01)
                until ($seen = $other->client_list =~ / flags=b /) || time > $deadline;
            $other->rpush("${p}wait", 'late');  # wakes the parent either way
            $seen;
        };
        POSIX::_exit($blocked ? 0 : 1);  # no destructors: the parent's connection is shared
    }
    my @got = $r->blpop("${p}wait", 60);
    waitpid($pid, 0);
    check($? == 0, 'BLPOP never blocked, or the pushing process failed');
    check(same(\@got, ["${p}wait", 'late']), "woken BLPOP: @got");
});

step('sorted_sets', sub {
    check($r->zadd("${p}z", 1, 'a', 2, 'b', 3, 'c') == 3, 'ZADD');
    check($r->zincrby("${p}z", 10, 'a') == 11, 'ZINCRBY');
    check(same([$r->zrange("${p}z", 0, -1, 'WITHSCORES')], [qw(b 2 c 3 a 11)]), 'ZRANGE');
    check(same([$r->zrangebyscore("${p}z", 2, 3)], [qw(b c)]), 'ZRANGEBYSCORE');
    check($r->zrank("${p}z", 'a') == 2, 'ZRANK');
    check($r->zscore("${p}z", 'c') == 3, 'ZSCORE');
});

step('scan', sub {
    $r->mset(map { ("${p}scan:$_", $_) } 0 .. 299);
    my ($cursor, %seen, $calls) = (0);
    $calls = 0;
    while (1) {
        my ($next, $keys) = $r->scan($cursor, 'MATCH', "${p}scan:*", 'COUNT', 20);
        $seen{$_} = 1 for @$keys;
        check(++$calls < 10000, 'SCAN did not reach cursor 0');
        $cursor = $next;
        last if $cursor eq '0';
    }
    check($calls > 1, 'one SCAN call returned everything');
    check(keys %seen == 300 && !grep({ !$seen{"${p}scan:$_"} } 0 .. 299), 'SCAN keys');
});

step('hscan', sub {
    $r->hset("${p}bigh", map { ("f$_", $_) } 0 .. 599);
    my ($cursor, %seen, $calls) = (0);
    $calls = 0;
    while (1) {
        my ($next, $kv) = $r->hscan("${p}bigh", $cursor, 'COUNT', 20);
        my %part = @$kv;
        @seen{keys %part} = values %part;
        check(++$calls < 10000, 'HSCAN did not reach cursor 0');
        $cursor = $next;
        last if $cursor eq '0';
    }
    check($calls > 1, 'one HSCAN call returned everything');
    check(keys %seen == 600 && !grep({ ($seen{"f$_"} // -1) != $_ } 0 .. 599), 'HSCAN fields');
});

step('pipeline', sub {
    # A command given a callback is sent without waiting for its reply.
    my @replies;
    $r->incr("${p}pipe", sub { push @replies, $_[0] }) for 1 .. 1000;
    $r->wait_all_responses;
    check(same(\@replies, [1 .. 1000]), '1,000 INCR replies');
    check($r->get("${p}pipe") == 1000, 'GET after the pipeline');
});

step('multi_watch', sub {
    $r->multi;
    $r->incr("${p}tx");
    $r->incr("${p}tx");
    check(same([$r->exec], [1, 2]), 'MULTI/EXEC');
    my $other = client();
    $r->watch("${p}w");
    $other->set("${p}w", 'theirs');
    $r->multi;
    $r->set("${p}w", 'mine');
    my @aborted = $r->exec;
    check(!@aborted || !defined $aborted[0], 'EXEC after a WATCH conflict ran');
    check($r->get("${p}w") eq 'theirs', 'value after the aborted EXEC');
    $r->watch("${p}w");
    $r->multi;
    $r->set("${p}w", 'mine');
    check(same([$r->exec], ['OK']), 'EXEC without a conflict');
    check($r->get("${p}w") eq 'mine', 'value after EXEC');
    $other->quit;
});

step('pubsub', sub {
    my $sub = client();
    my @got;
    # subscribe returns once the server has confirmed the subscription.
    $sub->subscribe("${p}chan", sub { my ($msg, $topic) = @_; @got = ($topic, $msg) });
    check($r->publish("${p}chan", 'hi') == 1, 'PUBLISH receivers');
    for (1 .. 60) {
        last if @got;
        $sub->wait_for_messages(1);
    }
    check(same(\@got, ["${p}chan", 'hi']), "message @got");
    $sub->unsubscribe("${p}chan", sub {});
    undef $sub;  # closes the connection: QUIT is refused while the confirmation is unread
});

step('eval_evalsha', sub {
    my $body = "return redis.call('INCRBY', KEYS[1], ARGV[1]) -- $p";
    my $sha = sha1_hex($body);
    my $ok = eval { $r->evalsha($sha, 1, "${p}ev", 2); 1 };
    check(!$ok && $@ =~ /NOSCRIPT/, "EVALSHA of an unknown script: $@");
    check($r->eval($body, 1, "${p}ev", 2) == 2, 'EVAL');
    check($r->evalsha($sha, 1, "${p}ev", 3) == 5, 'EVALSHA');
});

step('consumer_group', sub {
    my $st = "${p}st";
    $r->xgroup('CREATE', $st, 'g', '$', 'MKSTREAM');
    my @ids = map { scalar $r->xadd($st, '*', 'n', $_) } 0 .. 2;
    my @got = $r->xreadgroup('GROUP', 'g', 'c1', 'COUNT', 10, 'STREAMS', $st, '>');
    check(same([map { $_->[0] } @{$got[0][1]}], \@ids), 'XREADGROUP');
    check($r->xack($st, 'g', $ids[0]) == 1, 'XACK');
    my @summary = $r->xpending($st, 'g');
    check($summary[0] == 2 && $summary[1] eq $ids[1], 'XPENDING summary');
    my @detail = $r->xpending($st, 'g', '-', '+', 10);
    check(same([map { $_->[0] } @detail], [@ids[1, 2]]), 'XPENDING range');
    my @claimed = $r->xautoclaim($st, 'g', 'c2', 0, '0-0');
    check($claimed[0] eq '0-0' && same([map { $_->[0] } @{$claimed[1]}], [@ids[1, 2]]),
          'XAUTOCLAIM');
    my @after = $r->xpending($st, 'g');
    check(same($after[3][0], ['c2', '2']), 'XPENDING after XAUTOCLAIM');
});

step('xinfo_stream_full', sub {
    my $info = pairs([$r->xinfo('STREAM', "${p}st", 'FULL')]);
    check($info->{length} == 3, 'length');
    my $group = pairs($info->{groups}[0]);
    check($group->{name} eq 'g' && $group->{'pel-count'} == 2, 'group');
    my @names = map { pairs($_)->{name} } @{$group->{consumers}};
    check(same(\@names, [qw(c1 c2)]), "consumers @names");
});

print "SKIP resp3: $lib ", $lib->VERSION, " speaks RESP2 only\n";
$r->quit;
exit($failed ? 1 : 0);
