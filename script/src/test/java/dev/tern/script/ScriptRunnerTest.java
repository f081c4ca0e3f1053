package dev.tern.script;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The script runner itself: what it accepts, what it rejects, and how a failure reads. */
class ScriptRunnerTest {
    private static final String LISTEN = """
        0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
        +0    bind(3, ..., ...) = 0
        +0    listen(3, 1) = 0
        """;
    private static final String PASSIVE_OPEN = LISTEN + """
        +0    < S 0:0(0) win 65535 <mss 1460,sackOK,nop,nop,nop,wscale 7>
        +0    > S. 0:0(0) ack 1 win 65535 <mss 1460,nop,nop,sackOK,nop,wscale 2>
        +.01  < . 1:1(0) ack 1 win 512
        +0    accept(3, ..., ...) = 4
        """;

    /** Runs {@code script} under the corpus profile (our own scripts' rules) and returns how it failed. */
    private static ScriptException failure(String script) {
        return failure(script, ScriptProfile.corpus());
    }

    private static ScriptException failure(String script, ScriptProfile profile) {
        return assertThrows(ScriptException.class, () -> ScriptRunner.run("t.pkt", script, profile));
    }

    /** A small fluent check on a message, so a failure prints the whole message. */
    private record Text(String actual) {
        Text startsWith(String prefix) {
            assertTrue(actual.startsWith(prefix), () -> "expected a message starting with\n  " + prefix + "\nbut got\n  "
                + actual);
            return this;
        }

        Text contains(String part) {
            assertTrue(actual.contains(part), () -> "expected a message containing\n  " + part + "\nbut got\n  "
                + actual);
            return this;
        }

        void isEqualTo(String expected) {
            assertEquals(expected, actual);
        }
    }

    private static Text that(String message) {
        return new Text(message);
    }

    private static void passes(String script) {
        ScriptRunner.run("t.pkt", script, ScriptProfile.corpus());
    }

    @Nested
    class Passing {
        @Test
        void aPassiveOpenWithRelativeSequenceNumbersPasses() {
            passes(PASSIVE_OPEN);
        }

        @Test
        void shuttingTheReceiveSideMakesReadsReturnZeroWithoutBlocking() {
            passes(PASSIVE_OPEN + """
                +0    < P. 1:101(100) ack 1 win 512
                +0    > . 1:1(0) ack 101
                +0    shutdown(4, SHUT_RD) = 0
                +0    read(4, ..., 1000) = 100
                +0    read(4, ..., 1000) = 0
                +0    shutdown(4, SHUT_RDWR) = 0
                +0    > F. 1:1(0) ack 101
                """);
        }

        @Test
        void anyOptionsAndNoFlagsAreWrittenAsPacketdrillWritesThem() {
            passes(LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460>
                +0    > S. 0:0(0) ack 1 <...>
                +.01  < . 1:1(0) ack 1 win 512
                +0    accept(3, ..., ...) = 4
                +0    < - 1:1001(1000) win 512
                """);
            that(failure(LISTEN + "+0 < S 0:0(0) win 65535 <...>\n").getMessage())
                .startsWith("t.pkt:4: <...> (any options) is only for packets Tern sends (>)");
        }

        @Test
        void commentsAndBlankLinesAreIgnored() {
            passes("// a comment\n\n/* a block\n   over lines */\n" + PASSIVE_OPEN + "  // trailing\n");
        }

        @Test
        void aTimeRangeAndAnyTimeMatchARetransmission() {
            passes(PASSIVE_OPEN + """
                +0    write(4, ..., 1000) = 1000
                +0    > P. 1:1001(1000) ack 1
                0.200~0.230 > P. 1:1001(1000) ack 1
                *     > P. 1:1001(1000) ack 1
                +.01  < . 1:1(0) ack 1001 win 512
                """);
        }
    }

    @Nested
    class Rejected {
        @Test
        void aMalformedLineNamesTheFileAndTheLine() {
            final ScriptException e = failure(LISTEN + "+0 < S 0:0 win 65535\n");
            assertEquals(4, e.line());
            that(e.getMessage()).startsWith("t.pkt:4: ").contains("bad sequence numbers '0:0'");
        }

        @Test
        void aNumberTooLargeForItsFieldIsTheLinesError() {
            that(failure(LISTEN + "+0 < 480888888888888888888888888888>8080 S 0:0(0) win 65535\n").getMessage())
                .startsWith("t.pkt:4: the number 48088888888888888888... (30 digits) is too large for its field");
        }

        @Test
        void aBadTimeIsRejected() {
            that(failure("0.1.2 close(3) = 0\n").getMessage()).startsWith("t.pkt:1: bad time '0.1.2'");
        }

        @Test
        void anUnknownSyscallIsRejectedByName() {
            final ScriptException e = failure(LISTEN + "+0 writev(3, ..., 2) = 4\n");
            that(e.getMessage()).startsWith("t.pkt:4: ").contains("the call 'writev' is not supported");
            that(failure(LISTEN + "+0 epoll_create(1) = 4\n+0 epoll_ctl(4, EPOLL_CTL_ADD, 3, "
                + "{events=EPOLLIN|EPOLLRDHUP, fd=3}) = 0\n").getMessage())
                .startsWith("t.pkt:5: epoll event 'EPOLLRDHUP' is not supported");
            that(failure(LISTEN + "+0 epoll_create(1) = 4\n+0 epoll_wait(4, {events=EPOLLIN, fd=3}, 1, 0) = 1\n")
                .getMessage()).isEqualTo("t.pkt:5: epoll_wait gave no event, the script expects {events=EPOLLIN, "
                    + "fd=3}");
        }

        @Test
        void anUnsupportedOptionIsRejectedByName() {
            that(failure(LISTEN + "+0 < S 0:0(0) win 100 <md5 abc>\n").getMessage())
                .startsWith("t.pkt:4: TCP option 'md5 abc' is not supported");
        }

        @Test
        void anUnsupportedSocketOptionIsRejectedByName() {
            that(failure(LISTEN + "+0 setsockopt(3, IPPROTO_TCP, TCP_WINDOW_CLAMP, [1000], 4) = 0\n").getMessage())
                .startsWith("t.pkt:4: setsockopt IPPROTO_TCP TCP_WINDOW_CLAMP is not supported (supported: ");
            that(failure(LISTEN + "+0 setsockopt(3, IPPROTO_TCP, TCP_MD5SIG, [1], 4) = 0\n").getMessage())
                .isEqualTo("t.pkt:4: setsockopt IPPROTO_TCP TCP_MD5SIG is not supported: Tern does not implement TCP "
                    + "MD5 signatures (RFC 2385)");
            that(failure(LISTEN + "+0 setsockopt(3, SOL_IP, IP_MTU_DISCOVER, [IP_PMTUDISC_DONT], 4) = 0\n")
                .getMessage()).startsWith("t.pkt:4: IP_MTU_DISCOVER IP_PMTUDISC_DONT is not supported: Tern sets DF");
        }

        @Test
        void aBadReturnTimeOfABlockingCallIsRejected() {
            that(failure(LISTEN + "+0...x accept(3, ..., ...) = 4\n").getMessage())
                .startsWith("t.pkt:4: bad return time 'x' after '...'");
            that(failure(LISTEN + "+0...0.1 < S 0:0(0) win 100\n").getMessage())
                .startsWith("t.pkt:4: '...' (a call that spans time) is only for blocking calls");
        }

        @Test
        void shellCommandsAndOtherProtocolsAreRejected() {
            that(failure("`echo hi`\n").getMessage())
                .startsWith("t.pkt:1: shell command 'echo hi' is not supported: Tern runs in-process");
            that(failure(LISTEN + "+0 < sctp: INIT[flgs=0, tag=1, a_rwnd=1500, os=1, is=1, tsn=1]\n").getMessage())
                .startsWith("t.pkt:4: only TCP, UDP and ICMP packets are supported, not 'sctp:'");
        }

        @Test
        void icmpLinesTernCannotActOnAreRejected() {
            // Without a quote the error is about the connection's relative sequence number 0 (packetdrill's default).
            that(failure("0 < icmp unreachable port\n").getMessage())
                .isEqualTo("t.pkt:1: the ICMP error quotes a TCP segment, but the script has no connection yet");
            passes("""
                0     socket(..., SOCK_STREAM|SOCK_NONBLOCK, IPPROTO_TCP) = 3
                +0    connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
                +0    > S 0:0(0) <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 2>
                +.01  < icmp unreachable port
                +0    getsockopt(3, SOL_SOCKET, SO_ERROR, [ECONNREFUSED], [4]) = 0
                """);
            that(failure("0 < [udp (10)] icmp echo_request\n").getMessage())
                .startsWith("t.pkt:1: only an ICMP error quotes a packet; echo_request takes [raw (N)], its length");
            that(failure("0 < icmp time_exceeded [raw (40)]\n").getMessage())
                .startsWith("t.pkt:1: an ICMP error quotes a packet, [START:END(LENGTH)] or [udp (LENGTH)], not raw");
            that(failure("0 < [1:1(0)] icmp unreachable port mtu 1200\n").getMessage())
                .startsWith("t.pkt:1: 'mtu N' belongs to unreachable frag_needed only");
            that(failure("0 < icmp time_exceeded ttl [udp (10)]\n").getMessage())
                .startsWith("t.pkt:1: unknown ICMP time_exceeded code 'ttl' (write code_N for one by number; known: "
                    + "exceeded_frag_time, exceeded_hop_limit, frag_reass_exceeded, ttl_exceeded_in_transit)");
            that(failure("0 < icmp unreachable port id 3 [udp (10)]\n").getMessage())
                .startsWith("t.pkt:1: 'id N' belongs to echo_request and echo_reply only");
            that(failure("0 < icmp echo [raw (40)]\n").getMessage())
                .startsWith("t.pkt:1: unknown ICMP type 'echo' (write type_N for one by number; known: "
                    + "address_mask_reply,");
            that(failure("0 < udp 10\n").getMessage())
                .startsWith("t.pkt:1: bad UDP packet 'udp 10'");
        }

        @Test
        void anyTimeIsRejectedForInjectedPackets() {
            that(failure(LISTEN + "* < S 0:0(0) win 100\n").getMessage())
                .startsWith("t.pkt:4: '*' (any time) is only allowed for packets Tern sends");
        }

        @Test
        void anAckNumberWithoutTheAckFlagIsTheFieldAsOnTheWire() {
            // As packetdrill: the number is written and compared unmapped, the ACK bit clear.
            passes(LISTEN + "+0 < S 0:0(0) ack 1 win 100\n+0 > S. 0:0(0) ack 1 <mss 1460>\n");
            final String connect = "0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n"
                + "+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n"
                + "+0 connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)\n";
            that(failure(connect + "+0 > S 0:0(0) ack 5 <...>\n", ScriptProfile.linux()).getMessage())
                .contains(": ack field 0 (no ACK flag: as on the wire), not 5");
            passes(connect + "+0 > S 0:0(0) ack 0 <...>\n+0 close(3) = 0\n");
        }

        @Test
        void anUnclosedCommentIsRejected() {
            that(failure(LISTEN + "/* never closed\n+0 close(3) = 0\n").getMessage())
                .startsWith("t.pkt:4: a /* comment is never closed");
        }
    }

    @Nested
    class Failing {
        @Test
        void aDifferentPacketNamesTheLineWhatWasExpectedAndWhatTernSent() {
            final ScriptException e = failure(LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460,sackOK,nop,nop,nop,wscale 7>
                +0    > S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,wscale 7>
                """);
            assertEquals(5, e.line());
            that(e.getMessage()).startsWith("t.pkt:5: expected 'S. 0:0(0) ack 1 <mss 1460,nop,nop,sackOK,nop,"
                + "wscale 7>'; Tern sent 'S. 0:0(0) ack 1 win 65535 <mss 1460,nop,nop,sackOK,nop,wscale 2>' at 0.000000 s: "
                + "wscale 2, not 7");
        }

        @Test
        void aPacketTernNeverSendsNamesTheLine() {
            final ScriptException e = failure(PASSIVE_OPEN + "+0.5 > F. 1:1(0) ack 1\n");
            assertEquals(8, e.line());
            that(e.getMessage()).startsWith("t.pkt:8: expected Tern to send 'F. 1:1(0) ack 1' at 0.510000 s, "
                + "but Tern sent nothing by 0.514000 s");
        }

        @Test
        void aPacketSentTooEarlyFailsWithItsTime() {
            final ScriptException e = failure(PASSIVE_OPEN + """
                +0    write(4, ..., 1000) = 1000
                +0    > P. 1:1001(1000) ack 1
                +.5   > P. 1:1001(1000) ack 1
                """);
            that(e.getMessage()).isEqualTo("t.pkt:10: expected 'P. 1:1001(1000) ack 1' at 0.510000 s "
                + "(tolerance 4 ms); Tern sent 'P. 1:1001(1000) ack 1 win 32768' at 0.210000 s");
        }

        @Test
        void aLongerLineMatchesSegmentsSentBackToBackAsPacketdrillJoinsThem() {
            passes(PASSIVE_OPEN + "+0 write(4, ..., 3000) = 3000\n+0 > P. 1:3001(3000) ack 1\n");
            that(failure(PASSIVE_OPEN + "+0 write(4, ..., 3000) = 3000\n+0 > P. 1:2001(2000) ack 1\n").getMessage())
                .isEqualTo("t.pkt:9: expected 'P. 1:2001(2000) ack 1'; Tern sent '. 1:2921(2920) ack 1 win 32768' at "
                    + "0.010000 s (segments joined, as packetdrill joins them): flags ., not P.");
        }

        @Test
        void aPacketLargerThanTheLinksMtuArrivesAsOneSegmentAsPacketdrillsTunTakesIt() {
            // One segment: one ACK for all of it, and one read; Tern's own MSS stays the link's (PASSIVE_OPEN).
            passes(PASSIVE_OPEN + """
                +0    < P. 1:2001(2000) ack 1 win 512
                +0    > . 1:1(0) ack 2001
                +0    read(4, ..., 3000) = 2000
                """);
            that(failure(PASSIVE_OPEN + "+0 < P. 1:2001(2000) ack 1 win 512\n+0 > . 1:1(0) ack 1461\n").getMessage())
                .startsWith("t.pkt:9: expected '. 1:1(0) ack 1461'; Tern sent '. 1:1(0) ack 2001");
            // Below the stack's smallest MTU the link keeps the script's.
            that(failure("--mtu=500\n" + LISTEN + "+0 < S 0:1000(1000) win 65535\n").getMessage())
                .isEqualTo("t.pkt:5: the packet is 1040 bytes long with its IPv4 header, more than the link's MTU of "
                    + "500: send it as several segments");
        }

        @Test
        void aPacketSentTooLateFailsSayingWhatCameInstead() {
            final ScriptException e = failure(PASSIVE_OPEN + """
                +0    write(4, ..., 1000) = 1000
                +0    > P. 1:1001(1000) ack 1
                +.1   > P. 1:1001(1000) ack 1
                """);
            that(e.getMessage()).isEqualTo("t.pkt:10: expected Tern to send 'P. 1:1001(1000) ack 1' at 0.110000 s, "
                + "but Tern sent nothing by 0.114000 s; it sent 'P. 1:1001(1000) ack 1 win 32768' at 0.210000 s");
        }

        @Test
        void aBlockingCallThatNeverReturnsTimesOutNamingTheCall() {
            final ScriptException e = failure(PASSIVE_OPEN + "+0 read(4, ..., 1000) = 1000\n");
            assertEquals(8, e.line());
            that(e.getMessage()).startsWith("t.pkt:8: the blocking call read(4, ..., 1000) did not return "
                + "within 10 s of virtual time (waiting for data to read)");
        }

        @Test
        void aBlockingAcceptThatNeverReturnsTimesOutNamingTheCall() {
            that(failure(LISTEN + "+0 accept(3, ..., ...) = 4\n").getMessage())
                .startsWith("t.pkt:4: the blocking call accept(3, ..., ...) did not return");
        }

        @Test
        void aWrongReturnValueFails() {
            that(failure(PASSIVE_OPEN + """
                +0 fcntl(4, F_SETFL, O_RDWR|O_NONBLOCK) = 0
                +0 read(4, ..., 1000) = 1000
                """).getMessage()).isEqualTo("t.pkt:9: read returned -1 EAGAIN, the script expects 1000");
        }

        @Test
        void aPacketNoLineExpectsFailsTheScript() {
            final ScriptException e = failure(PASSIVE_OPEN + "+.1 close(4) = 0\n");
            that(e.getMessage()).startsWith("t.pkt:8: Tern sent 'F. 1:1(0) ack 1 win 32768' at 0.110000 s, "
                + "which no line of the script expects");
            final String bareOpen = PASSIVE_OPEN.replace("<mss 1460,nop,nop,sackOK,nop,wscale 2>", "<mss 1460>");
            that(failure(bareOpen + "+.1 close(4) = 0\n", ScriptProfile.bare()).getMessage())
                .contains("which no line of the script expects");
        }

        @Test
        void theProfilesForOtherStacksScriptsDoNotLookAfterTheLastLineAsPacketdrill() {
            // Packetdrill's validate-established-no-flags ends with data Tern acknowledges after the last line.
            ScriptRunner.run("t.pkt", PASSIVE_OPEN + "+.1 close(4) = 0\n", ScriptProfile.linux());
            ScriptRunner.run("t.pkt", PASSIVE_OPEN.replace("wscale 2", "wscale 8").replace("win 65535 <mss 1460,nop",
                "<mss 1460,nop") + "+.1 close(4) = 0\n", ScriptProfile.gtests());
            // Before the last line nothing changes: a segment no line expects fails the next > line.
            that(failure(PASSIVE_OPEN + "+.1 close(4) = 0\n+.1 > . 1:1(0) ack 1\n", ScriptProfile.linux())
                .getMessage()).startsWith("t.pkt:9: ");
        }

        @Test
        void timeGoingBackwardsFails() {
            that(failure(PASSIVE_OPEN + "+1 close(4) = 0\n0.5 close(3) = 0\n").getMessage())
                .startsWith("t.pkt:9: time goes backwards");
        }
    }

    @Nested
    class BlockingCallsThatSpanTime {
        @Test
        void aBlockingAcceptReturnsWhenTheHandshakeCompletes() {
            passes(LISTEN + """
                +0...0.100 accept(3, ..., ...) = 4
                +.1   < S 0:0(0) win 65535 <mss 1460>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                +0    < . 1:1(0) ack 1 win 512
                """);
        }

        @Test
        void afterARelativeStartTheEndCountsFromTheStartAsInPacketdrill() {
            // "+.1...0.200": starts 0.1 s and returns 0.2 s after the line before (packetdrill's reading); spaces
            // around '...' are allowed.
            passes(LISTEN + """
                +.1 ...0.200 accept(3, ..., ...) = 4
                +.1   < S 0:0(0) win 65535 <mss 1460>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                +0    < . 1:1(0) ack 1 win 512
                """);
        }

        @Test
        void aBlockingCallThatReturnsLateFailsNamingIt() {
            final ScriptException e = failure(LISTEN + """
                +0...0.050 accept(3, ..., ...) = 4
                +.1   < S 0:0(0) win 65535 <mss 1460>
                """);
            that(e.getMessage()).isEqualTo("t.pkt:4: the blocking call accept(3, ..., ...) had not returned at "
                + "0.054000 s, after the script's 0.050000 s (waiting for a connection to accept)");
        }

        @Test
        void aBlockingCallThatReturnsEarlyFails() {
            final ScriptException e = failure(LISTEN + """
                +0...0.500 accept(3, ..., ...) = 4
                +.1   < S 0:0(0) win 65535 <mss 1460>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                +0    < . 1:1(0) ack 1 win 512
                """);
            that(e.getMessage()).startsWith("t.pkt:4: accept returned 4 at 0.100000 s, before the script's 0.500000 s");
        }

        @Test
        void aBlockingCallStillWaitingAtTheEndFails() {
            that(failure(PASSIVE_OPEN + "+0...1.0 read(4, ..., 100) = 100\n").getMessage())
                .startsWith("t.pkt:8: the blocking call read(4, ..., 100) had not returned at 1.014000 s");
        }

        @Test
        void aBlockingReadAndABlockingAcceptArePendingAtOnce() {
            passes(PASSIVE_OPEN + """
                +0...+.2 read(4, ..., 100) = 10
                +0...+.1 accept(3, ..., ...) = 5
                +.1   < 48001>8080 S 0:0(0) win 65535 <mss 1460>
                +0    > 8080>48001 S. 0:0(0) ack 1 <mss 1460>
                +0    < . 1:1(0) ack 1 win 1000
                +.1   < 48000>8080 P. 1:11(10) ack 1 win 1000
                +0    > 8080>48000 . 1:1(0) ack 11
                """);
        }

        @Test
        void eachPendingCallIsCheckedOnItsOwn() {
            that(failure(PASSIVE_OPEN + """
                +0...+.2 read(4, ..., 100) = 10
                +0...+.1 accept(3, ..., ...) = 5
                +.1   < 48001>8080 S 0:0(0) win 65535 <mss 1460>
                +0    > 8080>48001 S. 0:0(0) ack 1 <mss 1460>
                +0    < . 1:1(0) ack 1 win 1000
                """).getMessage()).startsWith("t.pkt:8: the blocking call read(4, ..., 100) had not returned at "
                + "0.214000 s, after the script's 0.210000 s (waiting for data to read)");
        }
    }

    @Nested
    class SysctlsAndTcpInfo {
        @Test
        void aLeadingSysctlChangesWhatTernOffers() {
            passes("`sysctl -q net.ipv4.tcp_sack=0`\n`sysctl -q net.ipv4.tcp_window_scaling=0`\n" + LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460,sackOK,nop,nop,nop,wscale 7>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                """);
        }

        @Test
        void aSysctlMayCarryTheTimeZero() {
            passes("0 `sysctl -q net.ipv4.tcp_sack=0`\n+0 `sysctl -w net.ipv4.tcp_window_scaling=0`\n" + LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460,sackOK,nop,nop,nop,wscale 7>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                """);
            that(failure("* `sysctl -q net.ipv4.tcp_sack=0`\n").getMessage())
                .startsWith("t.pkt:1: '*' (any time) is only allowed for packets Tern sends (>)");
        }

        @Test
        void ecnFieldsAreWrittenOnInjectedSegmentsAndComparedOnTernsOwn() {
            final String ecn = LISTEN + """
                +0    < SEW 0:0(0) win 65535 <mss 1460>
                +0    > SE. 0:0(0) ack 1 <mss 1460>
                +.01  < . 1:1(0) ack 1 win 512
                +0    accept(3, ..., ...) = 4
                +0    write(4, ..., 100) = 100
                +0    > [ect0] P. 1:101(100) ack 1
                """;
            // A CE on the peer's data is echoed at once, on a Not-ECT pure ACK with Tern's TTL.
            passes(ecn + "+.01 < [ce] P. 1:101(100) ack 101 win 512\n+0 > [noecn] E. 101:101(0) ack 101\n");
            passes(ecn + "+.01 < (tos 0x03) P. 1:101(100) ack 101 win 512\n+0 > (ttl 64) E. 101:101(0) ack 101\n");
            that(failure(ecn.replace("> [ect0] P.", "> [noecn] P.")).getMessage())
                .contains("ECN field ECT(0), not Not-ECT");
            that(failure(ecn.replace("> [ect0] P.", "> (tos 0x00) P.")).getMessage())
                .contains("TOS 0x02, not 0x00");
            that(failure(ecn.replace("> [ect0] P.", "> (ttl 3) P.")).getMessage()).contains("TTL 64, not 3");
            passes(ecn.replace("> [ect0] P.", "> [ect01] P."));
        }

        @Test
        void aConnectionsErrorIsReportedOnceAsLinuxsSockError() {
            // The reset's ECONNRESET goes to the first call that looks; then a read finds the end and a write EPIPE.
            passes(PASSIVE_OPEN + """
                +0    < R. 1:1(0) win 0
                +0    write(4, ..., 100) = -1 ECONNRESET (Connection reset by peer)
                +0    read(4, ..., 100) = 0
                +0    write(4, ..., 100) = -1 EPIPE (Broken pipe)
                +0    getsockopt(4, SOL_SOCKET, SO_ERROR, [0], [4]) = 0
                """);
            that(failure(PASSIVE_OPEN + "+0 < R. 1:1(0) win 0\n+0 getsockopt(4, SOL_SOCKET, SO_ERROR, [0], [4]) = 0\n")
                .getMessage()).contains("ECONNRESET");
        }

        @Test
        void fastOpenCallsAndAConnectingSocketAnswerAsLinuxs() {
            // With the client's Fast Open off, TCP_FASTOPEN_CONNECT and MSG_FASTOPEN are EOPNOTSUPP; a non-blocking
            // write while the SYN is out waits for nothing (EAGAIN), a second connect is EALREADY.
            passes("""
                0     `sysctl -q net.ipv4.tcp_fastopen=0`
                +0    socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0    setsockopt(3, SOL_TCP, TCP_FASTOPEN_CONNECT, [1], 4) = -1 EOPNOTSUPP (Operation not supported)
                +0    sendto(3, ..., 100, MSG_FASTOPEN, ..., ...) = -1 EOPNOTSUPP (Operation not supported)
                +0    fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
                +0    connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
                +0    > S 0:0(0)
                +0    write(3, ..., 100) = -1 EAGAIN (Resource temporarily unavailable)
                +0    connect(3, ..., ...) = -1 EALREADY (Operation already in progress)
                +0    close(3) = 0
                """);
        }

        @Test
        void pollShowsThePeersFinAsPollrdhup() {
            passes(PASSIVE_OPEN + """
                +0    poll([{fd=4, events=POLLIN|POLLRDHUP, revents=0}], 1, 0) = 0
                +.01  < F. 1:1(0) ack 1 win 512
                +0    > . 1:1(0) ack 2
                +0    poll([{fd=4, events=POLLIN|POLLRDHUP, revents=POLLIN|POLLRDHUP}], 1, 0) = 1
                """);
        }

        @Test
        void anUnknownOrLateSysctlIsRejected() {
            that(failure("`sysctl -q net.ipv4.tcp_ecn_fallback=1`\n").getMessage())
                .startsWith("t.pkt:1: sysctl net.ipv4.tcp_ecn_fallback is not supported");
            that(failure(LISTEN + "`sysctl -q net.ipv4.tcp_wmem=\"4096 50000 4194304\"`\n+0 close(3) = 0\n")
                .getMessage()).startsWith("t.pkt:4: sysctl net.ipv4.tcp_wmem changes Tern's configuration after the "
                    + "script has started in what is fixed once the stack runs (sendBufferSize)");
            // A setting a connection takes when it opens applies from its line on: this SYN-ACK offers no SACK.
            passes(LISTEN + "`sysctl -q net.ipv4.tcp_sack=0`\n+0 < S 0:0(0) win 65535 <mss 1460,sackOK,nop,nop>\n"
                + "+0 > S. 0:0(0) ack 1 <mss 1460>\n");
            that(failure(LISTEN + "+0 < S 0:0(0) win 65535 <mss 1460,sackOK,nop,nop>\n+0 > S. 0:0(0) ack 1 <mss 1460>\n")
                .getMessage()).startsWith("t.pkt:5: ");
            // Later, a setting is taken when it changes nothing, or when only settings follow it.
            passes(LISTEN + "`sysctl -q net.ipv4.tcp_sack=1`\n+0 close(3) = 0\n`sysctl -q net.ipv4.tcp_sack=0`\n");
            that(failure("`sysctl -q net.ipv4.tcp_syncookies=2`\n").getMessage())
                .startsWith("t.pkt:1: net.ipv4.tcp_syncookies=2 is not supported");
        }

        @Test
        void packetdrillsToleranceOptionWidensTheTolerance() {
            final String late = PASSIVE_OPEN + "+0 write(4, ..., 1000) = 1000\n+.008 > P. 1:1001(1000) ack 1\n";
            that(failure(late).getMessage()).startsWith("t.pkt:9: expected 'P. 1:1001(1000) ack 1' at 0.018000 s "
                + "(tolerance 4 ms)");
            passes("--tolerance_usecs=10000\n" + late);
            that(failure("--ip_version=ipv5\n").getMessage()).isEqualTo("t.pkt:1: --ip_version takes ipv4, ipv6 or "
                + "ipv4-mapped-ipv6, got 'ipv5'");
            that(failure(LISTEN + "--tolerance_usecs=10000\n+0 close(3) = 0\n").getMessage())
                .startsWith("t.pkt:4: option line --tolerance_usecs changes Tern's configuration after the script");
        }

        @Test
        void tcpMemSetsTheBudgetInPages() {
            // One page of budget: the connection's buffers do not fit, so its SYN is dropped unanswered.
            passes("`sysctl -q net.ipv4.tcp_mem=\"1 1 1\"`\n" + LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460>
                """);
            passes("`sysctl -q net.ipv4.tcp_mem=\"1 1000 2000\"`\n" + LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                """);
            that(failure("`sysctl -q net.ipv4.tcp_mem=5`\n").getMessage())
                .startsWith("t.pkt:1: sysctl net.ipv4.tcp_mem takes 3 numbers between quotes, got 1");
            that(failure("`sysctl -q net.ipv4.tcp_sack=\"1 0\"`\n").getMessage())
                .startsWith("t.pkt:1: sysctl net.ipv4.tcp_sack takes 1 number, got 2");
            that(failure("`sysctl -q net.ipv4.tcp_mem=\"1 10 5\"`\n").getMessage())
                .startsWith("t.pkt:1: tcp_mem needs 0 < pressure <= high (pages), got 10 and 5");
        }

        @Test
        void tcpInfoComparesTheFieldsWritten() {
            passes(PASSIVE_OPEN + "+0 getsockopt(4, IPPROTO_TCP, TCP_INFO, {tcpi_state=TCP_ESTABLISHED, "
                + "tcpi_snd_mss=1460, tcpi_snd_cwnd=10}, [...]) = 0\n");
            that(failure(PASSIVE_OPEN
                + "+0 getsockopt(4, IPPROTO_TCP, TCP_INFO, {tcpi_state=TCP_CLOSE_WAIT}, [...]) = 0\n").getMessage())
                .isEqualTo("t.pkt:8: getsockopt TCP_INFO gave tcpi_state=TCP_ESTABLISHED, the script "
                + "expects TCP_CLOSE_WAIT");
            passes(PASSIVE_OPEN + "+0 getsockopt(4, IPPROTO_TCP, TCP_INFO, {tcpi_unacked=0, tcpi_ca_state=0}, [...]) "
                + "= 0\n");
            that(failure(PASSIVE_OPEN + "+0 getsockopt(4, IPPROTO_TCP, TCP_INFO, {tcpi_unacked=1}, [...]) = 0\n")
                .getMessage()).isEqualTo("t.pkt:8: getsockopt TCP_INFO gave tcpi_unacked=0, the script expects 1");
            that(failure(PASSIVE_OPEN + "+0 getsockopt(4, IPPROTO_TCP, TCP_INFO, {tcpi_segs_out=0}, [...]) = 0\n")
                .getMessage()).startsWith("t.pkt:8: TCP_INFO field 'tcpi_segs_out' is not supported");
        }
    }

    @Nested
    class LingerAndIoctl {
        @Test
        void soLingerWithZeroTimeoutClosesWithAReset() {
            passes(PASSIVE_OPEN + """
                +0    setsockopt(4, SOL_SOCKET, SO_LINGER, {onoff=1, linger=0}, 8) = 0
                +0    close(4) = 0
                +0    > R. 1:1(0) ack 1
                """);
            that(failure(PASSIVE_OPEN + "+0 setsockopt(4, SOL_SOCKET, SO_LINGER, {onoff=1}, 8) = 0\n")
                .getMessage()).isEqualTo("t.pkt:8: SO_LINGER takes {onoff=N, linger=N}");
        }

        @Test
        void fionreadGivesTheBytesWaiting() {
            passes(PASSIVE_OPEN + """
                +0    ioctl(4, FIONREAD, [0]) = 0
                +0    < P. 1:101(100) ack 1 win 512
                +0    > . 1:1(0) ack 101
                +0    ioctl(4, SIOCINQ, [100]) = 0
                +0    read(4, ..., 60) = 60
                +0    ioctl(4, FIONREAD, [40]) = 0
                """);
            that(failure(PASSIVE_OPEN + "+0 ioctl(4, FIONREAD, [5]) = 0\n").getMessage())
                .isEqualTo("t.pkt:8: ioctl FIONREAD gave [0], the script expects [5]");
        }
    }

    @Nested
    class SeveralConnections {
        private static final String TWO = LISTEN.replace("listen(3, 1)", "listen(3, 2)") + """
            +0    < S 0:0(0) win 65535 <mss 1460>
            +0    > S. 0:0(0) ack 1 <mss 1460>
            +0    < 48001>8080 S 0:0(0) win 65535 <mss 1460>
            +0    > 8080>48001 S. 0:0(0) ack 1 <mss 1460>
            +0    < 48000>8080 . 1:1(0) ack 1 win 1000
            +0    < 48001>8080 . 1:1(0) ack 1 win 1000
            +0    accept(3, ..., ...) = 4
            +0    accept(3, ..., ...) = 5
            """;

        @Test
        void packetsGoToTheFlowTheirPortsNameAndOtherwiseToTheCurrentOne() {
            passes(TWO + """
                +0    write(5, ..., 20) = 20
                +0    > 8080>48001 P. 1:21(20) ack 1
                +0    < 48001>8080 . 1:1(0) ack 21 win 1000
                +0    write(4, ..., 30) = 30
                +0    > P. 1:31(30) ack 1
                +0    < 48000>8080 . 1:1(0) ack 31 win 1000
                """);
        }

        @Test
        void aSegmentOfAnotherFlowFailsNamingItsPorts() {
            that(failure(TWO + """
                +0    write(4, ..., 20) = 20
                +0    > 8080>48001 P. 1:21(20) ack 1
                """).getMessage()).startsWith("t.pkt:13: expected '8080>48001 P. 1:21(20) ack 1'; Tern sent "
                + "'P. 1:21(20) ack 1 win 65535' (ports 8080>48000) at 0.000000 s: ports 8080>48000, not 8080>48001");
        }

        @Test
        void anIcmpErrorQuotingTheOtherFlowReachesThatConnection() {
            passes(TWO + """
                +0    write(4, ..., 1000) = 1000
                +0    > 8080>48000 P. 1:1001(1000) ack 1
                +0    write(5, ..., 1000) = 1000
                +0    > 8080>48001 P. 1:1001(1000) ack 1
                +.01  < [8080>48000 1:1001(1000)] icmp unreachable frag_needed mtu 800
                +0    > 8080>48000 . 1:761(760) ack 1
                +0    > 8080>48000 P. 761:1001(240) ack 1
                +0    getsockopt(4, IPPROTO_TCP, TCP_INFO, {tcpi_snd_mss=760}, [...]) = 0
                +0    getsockopt(5, IPPROTO_TCP, TCP_INFO, {tcpi_snd_mss=1460}, [...]) = 0
                """);
        }

        @Test
        void twoActiveOpensAreNumberedEachFromItsOwnSyn() {
            passes("""
                0     socket(..., SOCK_STREAM|SOCK_NONBLOCK, IPPROTO_TCP) = 3
                +0    connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
                +0    > S 0:0(0) <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 2>
                +0    socket(..., SOCK_STREAM|SOCK_NONBLOCK, IPPROTO_TCP) = 4
                +0    connect(4, ..., ...) = -1 EINPROGRESS (Operation now in progress)
                +0    > S 0:0(0) <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 2>
                +.1   < S. 0:0(0) ack 1 win 65535 <mss 1460>
                +0    > . 1:1(0) ack 1
                """);
        }
    }

    @Nested
    class UdpAndIcmp {
        @Test
        void aDatagramToAClosedPortIsAnsweredWithPortUnreachable() {
            passes("""
                0     < udp (10)
                +0    > [udp (10)] icmp unreachable port
                """);
        }

        @Test
        void theQuoteOfAnExpectedIcmpErrorIsCheckedForItsPorts() {
            passes("0 < 48001>9999 udp (10)\n+0 > [48001>9999 udp (10)] icmp unreachable port\n");
            that(failure("0 < 48001>9999 udp (10)\n+0 > [48001>9998 udp (10)] icmp unreachable port\n").getMessage())
                .contains("t.pkt:2: expected '[48001>9998 udp (10)] icmp unreachable port'; Tern sent")
                .contains("it quotes ports 48001>9999, not 48001>9998");
        }

        @Test
        void aBoundSocketReceivesAndAnswersTheSender() {
            passes("""
                0     socket(..., SOCK_DGRAM|SOCK_NONBLOCK, IPPROTO_UDP) = 3
                +0    bind(3, ..., ...) = 0
                +0    recvfrom(3, ..., 100, 0, ..., ...) = -1 EAGAIN (Resource temporarily unavailable)
                +0    < udp (10)
                +0    recvfrom(3, ..., 100, 0, ..., ...) = 10
                +0    sendto(3, ..., 20, 0, ..., ...) = 20
                +0    > 8080>48000 udp (20)
                """);
        }

        @Test
        void pollSeesADatagramArriveAndSoErrorIsRejectedOnUdp() {
            passes("""
                0     socket(..., SOCK_DGRAM, IPPROTO_UDP) = 3
                +0    bind(3, ..., ...) = 0
                +0    poll([{fd=3, events=POLLIN, revents=0}], 1, 0) = 0
                +0...0.1 poll([{fd=3, events=POLLIN, revents=POLLIN}], 1, 500) = 1
                +.1   < udp (10)
                +0    read(3, ..., 100) = 10
                +0...0.2 poll([{fd=3, events=POLLIN, revents=0}], 1, 200) = 0
                """);
            that(failure("0 socket(..., SOCK_DGRAM, IPPROTO_UDP) = 3\n+0 bind(3, ..., ...) = 0\n"
                + "+0...0.3 poll([{fd=3, events=POLLIN, revents=0}], 1, 200) = 0\n").getMessage())
                .startsWith("t.pkt:3: poll returned 0 at 0.200000 s, before the script's 0.300000 s");
            that(failure("0 socket(..., SOCK_DGRAM, IPPROTO_UDP) = 3\n+0 getsockopt(3, SOL_SOCKET, SO_ERROR, [0], "
                + "[4]) = 0\n").getMessage())
                .startsWith("t.pkt:2: getsockopt SO_ERROR is supported on TCP sockets only");
        }

        @Test
        void listenAndAcceptOnAUdpSocketAreNotSupported() {
            passes("""
                0     socket(..., SOCK_DGRAM, IPPROTO_UDP) = 3
                +0    bind(3, ..., ...) = 0
                +0    listen(3, 1) = -1 EOPNOTSUPP (Operation not supported)
                +0    accept(3, ..., ...) = -1 EOPNOTSUPP (Operation not supported)
                +0    < S 0:0(0) win 65535 <mss 1460>
                +0    > R. 0:0(0) ack 1 win 0
                """);
        }

        @Test
        void aDatagramOfTheWrongLengthFails() {
            that(failure("""
                0     socket(..., SOCK_DGRAM, IPPROTO_UDP) = 3
                +0    connect(3, ..., ...) = 0
                +0    write(3, ..., 30) = 30
                +0    > udp (31)
                """).getMessage()).contains("t.pkt:4: expected 'udp (31)'; Tern sent '").contains(">8080 udp (30)' at "
                + "0.000000 s: 30 bytes, not 31");
        }

        @Test
        void portUnreachableRefusesAConnectedSocket() {
            passes("""
                0     socket(..., SOCK_DGRAM, IPPROTO_UDP) = 3
                +0    connect(3, ..., ...) = 0
                +0    write(3, ..., 30) = 30
                +0    > udp (30)
                +.1   < [udp (30)] icmp unreachable port
                +0    read(3, ..., 100) = -1 ECONNREFUSED (Connection refused)
                """);
        }

        @Test
        void anEchoRequestIsAnsweredWithItsIdentifierAndData() {
            passes("""
                0     < icmp echo_request id 7 [raw (64)]
                +0    > icmp echo_reply id 7 [raw (64)]
                +0    < icmp echo_request
                +0    > icmp echo_reply code_0 id 0 [raw (36)]
                +0    < icmp type_13
                +0    < icmp source_quench [udp (10)]
                """);
            that(failure("0 < icmp echo_request id 7 [raw (64)]\n+0 > icmp echo_reply id 8\n").getMessage())
                .isEqualTo("t.pkt:2: expected 'icmp echo_reply id 8'; Tern sent 'icmp echo_reply id 7 [raw (64)]' at "
                    + "0.000000 s: id 7, not 8");
        }

        @Test
        void timeExceededWhileConnectingEndsTheAttemptAndLaterIsASoftError() {
            passes("""
                0     socket(..., SOCK_STREAM|SOCK_NONBLOCK, IPPROTO_TCP) = 3
                +0    connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
                +0    > S 0:0(0) <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 2>
                +.01  < icmp time_exceeded [0:0(0)]
                +0    getsockopt(3, SOL_SOCKET, SO_ERROR, [EHOSTUNREACH], [4]) = 0
                """);
        }

        @Test
        void fragmentationNeededShrinksTheSegmentsOfTheQuotedConnection() {
            passes(LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                +0    < . 1:1(0) ack 1 win 65535
                +0    accept(3, ..., ...) = 4
                +0    write(4, ..., 1460) = 1460
                +0    > P. 1:1461(1460) ack 1
                +.01  < [1:1461(1460)] icmp unreachable frag_needed mtu 1200
                +0    > . 1:1161(1160) ack 1
                +0    > P. 1161:1461(300) ack 1
                """);
        }
    }

    @Nested
    class PayloadBytes {
        @Test
        void dataBothWaysIsComparedByteForByteThroughSplitsAndReassembly() {
            passes(PASSIVE_OPEN + """
                +0    write(4, ..., 2000) = 2000
                +0    > . 1:1461(1460) ack 1
                +0    > P. 1461:2001(540) ack 1
                +.01  < . 1:1(0) ack 2001 win 512
                +0    < P. 1001:2001(1000) ack 2001 win 512
                +0    > . 2001:2001(0) ack 1 <nop,nop,sack 1001:2001>
                +0    < P. 1:1001(1000) ack 2001 win 512
                +0    > . 2001:2001(0) ack 2001
                +0    read(4, ..., 1500) = 1500
                +0    read(4, ..., 1500) = 500
                """);
        }

        @Test
        void aByteTernSendsThatTheApplicationDidNotWriteThereFailsNamingIt() {
            // Every 'q' the application writes becomes '?', as a stack that corrupts data would send it.
            final ScriptException e = assertThrows(ScriptException.class, () -> ScriptRunner.run("t.pkt",
                PASSIVE_OPEN + "+0 write(4, ..., 100) = 100\n+0 > P. 1:101(100) ack 1\n", ScriptProfile.linux(), null,
                seq -> ScriptPayload.tern(seq) == 'q' ? '?' : ScriptPayload.tern(seq)));
            assertEquals(9, e.line());
            that(e.getMessage()).startsWith("t.pkt:9: expected 'P. 1:101(100) ack 1'; Tern sent 'P. 1:101(100) ack 1 "
                + "win 32768' at 0.010000 s: byte ").contains(" is 0x3f '?', not 0x71 'q' (the application wrote "
                + "the pattern of docs/SCRIPTS.md there)");
        }

        @Test
        void theFirstDifferentByteIsFoundAndShownWithItsPosition() {
            final byte[] data = new byte[40];
            final java.lang.foreign.MemorySegment segment = java.lang.foreign.MemorySegment.ofArray(data);
            ScriptPayload.fill(segment, 0, data.length, 1000, ScriptPayload::remote);
            assertEquals(-1, ScriptPayload.firstDifference(segment, 0, data.length, 1000, ScriptPayload::remote));
            assertEquals(0, ScriptPayload.firstDifference(segment, 0, data.length, 1001, ScriptPayload::remote));
            data[17] = 0;
            assertEquals(17, ScriptPayload.firstDifference(segment, 0, data.length, 1000, ScriptPayload::remote));
            // 1017 mod 26 is 3: 'D'.
            that(ScriptPayload.difference(segment, 0, 17, 1000, ScriptPayload::remote)).isEqualTo("is 0x00, not "
                + "0x44 'D'");
        }

        @Test
        void aDatagramsBytesAreCheckedBothWays() {
            passes("""
                0     socket(..., SOCK_DGRAM, IPPROTO_UDP) = 3
                +0    bind(3, ..., ...) = 0
                +0    < udp (100)
                +0    recvfrom(3, ..., 60, 0, ..., ...) = 60
                +0    sendto(3, ..., 30, 0, ..., ...) = 30
                +0    > 8080>48000 udp (30)
                """);
        }
    }

    @Test
    void everyProfileIsNamedAndDistinct() {
        final List<String> names = ScriptProfile.all().stream().map(ScriptProfile::name).toList();
        assertEquals(List.of("linux", "bare", "gtests", "freebsd", "corpus"), names);
        assertFalse(ScriptProfile.linux().strictEnd());
        assertFalse(ScriptProfile.gtests().strictEnd());
        assertTrue(ScriptProfile.corpus().strictEnd());
        assertTrue(ScriptProfile.bare().strictEnd());
        assertTrue(ScriptProfile.named("linux").isPresent());
        assertTrue(ScriptProfile.named("nope").isEmpty());
    }

    /** Packetdrill's forms beyond one statement a line: statements over lines, msghdr calls, Python blocks, options. */
    @Nested
    class PacketdrillForms {
        private static final String TS_OPEN = """
            0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
            +0    bind(3, ..., ...) = 0
            +0    listen(3, 1) = 0
            +0    < S 0:0(0) win 65535 <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 7>
            +0    > S. 0:0(0) ack 1 <mss 1460,sackOK,TS val 1000 ecr 100,nop,wscale 2>
            +.01  < . 1:1(0) ack 1 win 512 <nop,nop,TS val 110 ecr 1000>
            +0    accept(3, ..., ...) = 4
            """;

        @Test
        void aStatementContinuesOverLinesUntilItsBracketsBalance() {
            passes(PASSIVE_OPEN + """
                +0    poll([{fd=4,
                             events=POLLOUT,
                             revents=POLLOUT}], 1, 0) = 1
                +0    write(4, ..., 100) = 100
                +0    > P. 1:101(100) ack 1
                """);
            // The next statement keeps its own line number: 12, after the poll's three lines.
            final ScriptException e = failure(PASSIVE_OPEN + """
                +0    poll([{fd=4,
                             events=POLLOUT,
                             revents=POLLOUT}], 1, 0) = 1
                +0    write(4, ..., 100) = 100
                +0    > P. 1:101(99) ack 1
                """);
            assertEquals(12, e.line());
            that(e.getMessage()).isEqualTo("t.pkt:12: sequence range 1:101 holds 100 bytes, not 99");
        }

        @Test
        void aStatementThatNeverClosesIsRejectedAtItsFirstLine() {
            that(failure(PASSIVE_OPEN + "+0    poll([{fd=4,\n   events=POLLOUT\n\n").getMessage())
                .isEqualTo("t.pkt:8: the statement starting here never ends: '{' is not closed (a statement continues "
                    + "over lines until its brackets balance, as in packetdrill)");
            that(failure("0 %{ assert tcpi_snd_cwnd == 10\n").getMessage())
                .startsWith("t.pkt:1: the statement starting here never ends: a Python block '%{' without its '}%'");
            that(failure("`sysctl -q net.ipv4.tcp_sack=0\n").getMessage())
                .startsWith("t.pkt:1: the statement starting here never ends: a shell command '`' without its closing");
        }

        @Test
        void sendmsgAndRecvmsgWithAPlainIovecMoveItsTotalLength() {
            passes(PASSIVE_OPEN + """
                +0    sendmsg(4, {msg_name(...)=...,
                                  msg_iov(4)=[{..., 0}, {..., 40}, {..., 0}, {..., 20}],
                                  msg_flags=0}, 0) = 60
                +0    > P. 1:61(60) ack 1
                +.01  < P. 1:1001(1000) ack 61 win 512
                +0    > . 61:61(0) ack 1001
                +0    recvmsg(4, {msg_name(...)=..., msg_iov(2)=[{..., 600}, {...,600}], msg_flags=0,
                                  msg_control=[]}, 0) = 1000
                """);
        }

        @Test
        void aZerocopySendsCompletionIsReadFromTheErrorQueueOnceAcknowledged() {
            final String send = PASSIVE_OPEN + """
                +0    setsockopt(4, SOL_SOCKET, SO_ZEROCOPY, [1], 4) = 0
                +0    send(4, ..., 100, MSG_ZEROCOPY) = 100
                +0    > P. 1:101(100) ack 1
                """;
            final String errQueue = """
                +0    recvmsg(4, {msg_name(...)=..., msg_iov(1)=[{...,0}], msg_flags=MSG_ERRQUEUE,
                                  msg_control=[{cmsg_level=SOL_IP, cmsg_type=IP_RECVERR,
                                  cmsg_data={ee_errno=0, ee_origin=SO_EE_ORIGIN_ZEROCOPY, ee_type=0,
                                  ee_code=SO_EE_CODE_ZEROCOPY_COPIED, ee_info=0, ee_data=0}}]}, MSG_ERRQUEUE) = 0
                """;
            passes(send + "+.01 < . 1:1(0) ack 101 win 512\n" + errQueue);
            // Before the ACK no notice waits: EAGAIN.
            that(failure(send + errQueue).getMessage()).startsWith("t.pkt:11: ");
        }

        @Test
        void msghdrFormsTernCannotExpressAreRejectedWithTheLine() {
            that(failure(PASSIVE_OPEN + """
                +0    recvmsg(4, {msg_name(...)=..., msg_iov(1)=[{..., 2000}], msg_flags=0,
                                  msg_control=[{cmsg_level=SOL_SOCKET,
                                                cmsg_type=SCM_TIMESTAMPING,
                                                cmsg_data={scm_sec=0,scm_nsec=0}}]}, 0) = 2000
                """).getMessage()).startsWith("t.pkt:8: recvmsg with control messages (cmsg) other than recvmsg's "
                + "TCP_CM_INQ is not supported");
            that(failure(PASSIVE_OPEN + "+0 sendmsg(4, {msg_iov(2)=[{..., 40}], msg_flags=0}, 0) = 40\n").getMessage())
                .isEqualTo("t.pkt:8: msg_iov(2) lists 1 element");
            that(failure(PASSIVE_OPEN + "+0 recvmsg(4, {msg_iov(1)=[{..., 40}], msg_flags=MSG_TRUNC}, 0) = 40\n")
                .getMessage()).isEqualTo("t.pkt:8: recvmsg msg_flags other than 0 are not supported, not 'MSG_TRUNC'");
        }

        @Test
        void aPythonBlockAssertsOnTheTcpInfoOfTheSocketUnderTest() {
            passes(PASSIVE_OPEN + """
                +0    %{ assert tcpi_snd_cwnd == 10, tcpi_snd_cwnd }%
                +0    %{ assert tcpi_snd_ssthresh == TCP_INFINITE_SSTHRESH, tcpi_snd_ssthresh }%
                +0    %{
                assert tcpi_state == TCP_ESTABLISHED
                # a comment, and a chain as Python reads it
                assert 5000 <= tcpi_rtt <= 20000 and tcpi_snd_mss != 0, 'srtt=%d us' % tcpi_rtt
                assert tcpi_rto >= 200000; assert tcpi_total_retrans < 1
                }%
                """);
        }

        @Test
        void anAssertTakesPythonsOperatorsWithItsPrecedence() {
            passes(PASSIVE_OPEN + """
                +0    %{
                assert tcpi_snd_cwnd == 9 or tcpi_snd_cwnd == 10
                assert not tcpi_snd_cwnd == 9 and not (tcpi_unacked != 0 or tcpi_sacked != 0)
                assert tcpi_options & TCPI_OPT_SACK and (tcpi_options & TCPI_OPT_ECN) == 0
                assert tcpi_options == TCPI_OPT_SACK | TCPI_OPT_WSCALE | TCPI_OPT_TIMESTAMPS & 0
                assert tcpi_ca_state == TCP_CA_Open != TCP_CA_Loss
                assert tcpi_probes == 0 and \\
                       tcpi_backoff == 0; assert tcpi_retransmits == 0
                }%
                """);
            // 'and' binds closer than 'or', comparisons closer than 'not': each line below would hold if not.
            that(failure(PASSIVE_OPEN + "+0 %{ assert tcpi_snd_cwnd == 9 and tcpi_rtt > 0 or tcpi_snd_cwnd == 9 }%\n")
                .getMessage()).isEqualTo("t.pkt:8: 'assert tcpi_snd_cwnd == 9 and tcpi_rtt > 0 or tcpi_snd_cwnd == 9' "
                + "failed: tcpi_snd_cwnd == 9 and tcpi_rtt > 0 or tcpi_snd_cwnd == 9 does not hold (tcpi_snd_cwnd is "
                + "10, tcpi_rtt is 10000), on file descriptor 4");
            that(failure(PASSIVE_OPEN + "+0 %{ assert not tcpi_snd_cwnd == 10 }%\n").getMessage())
                .startsWith("t.pkt:8: 'assert not tcpi_snd_cwnd == 10' failed: not tcpi_snd_cwnd == 10 does not hold");
            that(failure(PASSIVE_OPEN + "+0 %{ assert (tcpi_options & TCPI_OPT_TIMESTAMPS) != 0 }%\n").getMessage())
                .startsWith("t.pkt:8: 'assert (tcpi_options & TCPI_OPT_TIMESTAMPS) != 0' failed: (tcpi_options & "
                    + "TCPI_OPT_TIMESTAMPS) != 0 does not hold (tcpi_options is 6)");
        }

        @Test
        void aFailingAssertNamesItsLineAndTheFieldsValues() {
            that(failure(PASSIVE_OPEN + """
                +0    %{
                assert tcpi_snd_cwnd == 10
                assert tcpi_snd_cwnd > 10 and tcpi_rtt < 20000, tcpi_snd_cwnd
                }%
                """).getMessage()).isEqualTo("t.pkt:10: 'assert tcpi_snd_cwnd > 10 and tcpi_rtt < 20000, "
                + "tcpi_snd_cwnd' failed: tcpi_snd_cwnd > 10 does not hold (tcpi_snd_cwnd is 10), on file descriptor 4");
            that(failure("0 %{ assert tcpi_snd_cwnd == 10 }%\n").getMessage())
                .isEqualTo("t.pkt:1: a Python block reads TCP_INFO of the socket under test (the last one socket or "
                    + "accept made), and there is none yet");
        }

        @Test
        void aSocketNeverConnectedHasItsClosedStateOnly() {
            passes("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 %{ assert tcpi_state == TCP_CLOSE }%\n");
            that(failure("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 %{ assert tcpi_state == TCP_LISTEN }%\n")
                .getMessage()).startsWith("t.pkt:2: 'assert tcpi_state == TCP_LISTEN' failed: tcpi_state == TCP_LISTEN "
                    + "does not hold (tcpi_state is 7)");
            that(failure("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n+0 %{ assert tcpi_rto == 1000000 }%\n")
                .getMessage()).isEqualTo("t.pkt:2: file descriptor 3 has never connected or listened: of its TCP_INFO "
                    + "the runner knows tcpi_state only, not tcpi_rto");
        }

        @Test
        void pythonTernDoesNotReadIsRejectedWithTheLineAndTheReason() {
            that(failure(PASSIVE_OPEN + """
                +0    %{
                assert tcpi_snd_cwnd == 10
                print(tcpi_snd_cwnd)
                }%
                """).getMessage()).startsWith("t.pkt:10: Python block: 'print(tcpi_snd_cwnd)' is not supported: only "
                + "assert statements are read; Tern does not run Python");
            that(failure(PASSIVE_OPEN + "+0 %{ assert tcpi_segs_out == 0, tcpi_segs_out }%\n").getMessage())
                .startsWith("t.pkt:8: TCP_INFO field 'tcpi_segs_out' is not supported in a Python block "
                    + "(supported: tcpi_state, ");
            // A SYN without data: TCPI_OPT_SYN_DATA is clear (the Fast Open scripts show it set).
            that(failure(PASSIVE_OPEN + "+0 %{ assert (tcpi_options & TCPI_OPT_SYN_DATA) != 0, tcpi_options }%\n")
                .getMessage()).startsWith("t.pkt:8: 'assert (tcpi_options & TCPI_OPT_SYN_DATA) != 0, tcpi_options' "
                + "failed");
            that(failure(PASSIVE_OPEN + "+0 %{ assert tcpi_snd_cwnd + 1 > 10 }%\n").getMessage())
                .startsWith("t.pkt:8: Python block: 'assert tcpi_snd_cwnd + 1 > 10' is not supported: '+' where an "
                    + "operator or the end was expected");
            that(failure(PASSIVE_OPEN + "+0 %{ assert (tcpi_snd_cwnd == 10 }%\n").getMessage())
                .startsWith("t.pkt:8: Python block: unbalanced brackets");
        }

        @Test
        void strictSegmentsMatchesOneSegmentPerLine() {
            final String twoSegments = PASSIVE_OPEN + "+0 write(4, ..., 2920) = 2920\n+0 > P. 1:2921(2920) ack 1\n";
            passes(twoSegments);
            that(failure("--strict_segments\n" + twoSegments).getMessage())
                .startsWith("t.pkt:10: expected 'P. 1:2921(2920) ack 1'; Tern sent '. 1:1461(1460) ack 1");
        }

        @Test
        void tsTickUsecsComparesTheTsValWithinTheTolerance() {
            final String script = TS_OPEN + "+0 write(4, ..., 100) = 100\n+0 > P. 1:101(100) ack 1 "
                + "<nop,nop,TS val %d ecr 110>\n";
            passes(script.formatted(1020));
            passes("--tcp_ts_tick_usecs=1000\n" + script.formatted(1010));
            that(failure("--tcp_ts_tick_usecs=1000\n" + script.formatted(1020)).getMessage())
                .startsWith("t.pkt:10: expected 'P. 1:101(100) ack 1 <nop,nop,TS val 1020 ecr 110>'")
                .contains(": TS val 1010, not 1020 (10 ticks of 1000 µs off, beyond the tolerance of 4000 µs)");
            that(failure("--tcp_ts_tick_usecs=x\n").getMessage())
                .isEqualTo("t.pkt:1: --tcp_ts_tick_usecs takes a number of microseconds, like --tcp_ts_tick_usecs=1000");
            // Packetdrill's offset mapping of an injected TS ecr: what the runner does for every TS ecr.
            passes("--tcp_ts_ecr_scaled\n" + script.formatted(1020));
            that(failure("--tcp_ts_ecr_scaled=1\n").getMessage())
                .isEqualTo("t.pkt:1: --tcp_ts_ecr_scaled takes no value");
            that(failure("--frobnicate=1\n").getMessage()).isEqualTo("t.pkt:1: command-line option '--frobnicate' is "
                + "not supported: unknown to Tern's runner (supported: --ip_version=ipv4|ipv6|ipv4-mapped-ipv6, --tolerance_usecs=N, "
                + "--tolerance_percent=P, --tcp_ts_tick_usecs=N, --tcp_ts_ecr_scaled, --strict_segments, --mss=N, "
                + "--mtu=N, --define=NAME=VALUE, --local_ip=A.B.C.D, --remote_ip=A.B.C.D, --gateway_ip=A.B.C.D, "
                + "--netmask_ip=A.B.C.D)");
        }

        @Test
        void tcpWmemSetsTheSendBufferAsSoSndbufDoes() {
            // 50000 bytes asked, 65536 made (Tern's rings are powers of two): what a non-blocking write can take.
            passes("`sysctl -q net.ipv4.tcp_wmem=\"4096 50000 4194304\"`\n" + PASSIVE_OPEN + """
                +0    fcntl(4, F_SETFL, O_RDWR|O_NONBLOCK) = 0
                +0    write(4, ..., 100000) = 65536
                +0    > . 1:14601(14600) ack 1
                """);
        }

        @Test
        void theScriptNamesItsDescriptorsAsPacketdrillLetsIt() {
            // packetdrill maps the script's descriptor numbers onto the kernel's: a first socket may be 4.
            passes("""
                0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 5
                +0    bind(5, ..., ...) = 0
                +0    listen(5, 1) = 0
                +0    < S 0:0(0) win 65535 <mss 1460>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                +.01  < . 1:1(0) ack 1 win 512
                +0    accept(5, ..., ...) = 3
                +0    setsockopt(3, SOL_TCP, TCP_NODELAY, [1], 4) = 0
                +0    getsockopt(3, SOL_TCP, TCP_NODELAY, [1], [4]) = 0
                +0    close(5) = 0
                """);
        }

        @Test
        void msgEorEndsARecordThatNoSegmentCarriesOn() {
            // The record's 100 bytes cannot grow, so Nagle does not hold them; the plain write's 100 wait for the ACK.
            passes(PASSIVE_OPEN + """
                +0    write(4, ..., 100) = 100
                +0    > P. 1:101(100) ack 1
                +0    send(4, ..., 100, MSG_EOR) = 100
                +0    write(4, ..., 100) = 100
                +0    > P. 101:201(100) ack 1
                +.01  < . 1:1(0) ack 201 win 512
                +0    > P. 201:301(100) ack 1
                """);
        }

        @Test
        void sendFlagsAndSysctlValuesTernCannotTakeAreNamed() {
            that(failure(PASSIVE_OPEN + "+0 send(4, ..., 100, MSG_OOB) = 100\n").getMessage())
                .isEqualTo("t.pkt:8: send flag MSG_OOB is not supported: Tern does not implement urgent data");
            that(failure(PASSIVE_OPEN + "+0 recv(4, ..., 100, MSG_EOR) = 100\n").getMessage())
                .isEqualTo("t.pkt:8: recv flag MSG_EOR is not supported: receive flags are MSG_PEEK, MSG_DONTWAIT "
                    + "and MSG_WAITALL");
            that(failure(PASSIVE_OPEN + "+0 send(4, ..., 100, MSG_PEEK) = 100\n").getMessage())
                .isEqualTo("t.pkt:8: send flag MSG_PEEK is not supported: send flags are MSG_DONTWAIT, "
                    + "MSG_NOSIGNAL, MSG_MORE, MSG_ZEROCOPY and MSG_EOR");
            that(failure(PASSIVE_OPEN + "+0 setsockopt(4, SOL_SOCKET, SO_TIMESTAMPING, [SOF_TIMESTAMPING_SOFTWARE], 4) "
                + "= 0\n").getMessage()).startsWith("t.pkt:8: setsockopt SOL_SOCKET SO_TIMESTAMPING is not supported");
            that(failure("`sysctl -q net.ipv4.tcp_ecn=3`\n").getMessage())
                .startsWith("t.pkt:1: sysctl net.ipv4.tcp_ecn=3 is not supported: Tern has RFC 3168 ECN only");
            that(failure("`sysctl -q net.ipv4.tcp_sack=on`\n").getMessage())
                .isEqualTo("t.pkt:1: sysctl net.ipv4.tcp_sack takes numbers, not 'on'");
        }

        @Test
        void slowStartAfterIdleIsASetting() {
            final String idle = PASSIVE_OPEN + """
                +0    write(4, ..., 14600) = 14600
                +0    > P. 1:14601(14600) ack 1
                +.01  < . 1:1(0) ack 14601 win 512
                +0    %{ assert tcpi_snd_cwnd == 20 }%
                +2    write(4, ..., 1000) = 1000
                +0    > P. 14601:15601(1000) ack 1
                +0    %{ assert tcpi_snd_cwnd == %d }%
                """;
            passes(idle.replace("%d", "10"));
            passes("`sysctl -q net.ipv4.tcp_slow_start_after_idle=1`\n" + idle.replace("%d", "10"));
            passes("`sysctl -q net.ipv4.tcp_slow_start_after_idle=0`\n" + idle.replace("%d", "20"));
        }
    }

    @Nested
    class FastOpen {
        private static final String FAST_OPEN_LISTEN = """
            `sysctl -q net.ipv4.tcp_fastopen=0x2`
            0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
            +0    bind(3, ..., ...) = 0
            +0    listen(3, 1) = 0
            +0    setsockopt(3, SOL_TCP, TCP_FASTOPEN, [1], 4) = 0
            """;

        @Test
        void tfoCookieIsTernsCookieForTheRemoteUnderTheRunsKey() {
            // Linux's construction (FastOpenKeysTest) for 198.18.0.1 to 198.18.0.2 under defaults.sh's key.
            assertEquals(0xdd36de77b0e33091L, ScriptRunner.fastOpenCookie(ScriptProfile.corpus().tcp()));
            passes(FAST_OPEN_LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460,FO,nop,nop>
                +0    > S. 0:0(0) ack 1 <mss 1460,FO dd36de77b0e33091,nop,nop>
                """);
            // Another key from the sysctl: TFO_COOKIE follows it.
            that(failure("`sysctl -q net.ipv4.tcp_fastopen_key=1-2-3-4`\n" + FAST_OPEN_LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460,FO,nop,nop>
                +0    > S. 0:0(0) ack 1 <mss 1460,FO dd36de77b0e33091,nop,nop>
                """).getMessage()).contains("t.pkt:8: ").contains(", not FO dd36de77b0e33091");
            passes("`sysctl -q net.ipv4.tcp_fastopen_key=1-2-3-4`\n" + FAST_OPEN_LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460,FO,nop,nop>
                +0    > S. 0:0(0) ack 1 <mss 1460,FO TFO_COOKIE,nop,nop>
                """);
        }

        @Test
        void theScriptsAddressLinesSetTheWireAndTheCookieFollowsThem() {
            // Packetdrill's defaults, as the Linux suite's fastopen/server scripts write them: Linux's cookie for a
            // SYN from 192.0.2.1 to 192.168.0.1 under defaults.sh's key is 3021b9d889017eeb.
            final String addressed = "--remote_ip=192.0.2.1\n--local_ip=192.168.0.1\n" + FAST_OPEN_LISTEN;
            passes(addressed + """
                +0    < S 0:0(0) win 65535 <mss 1460,FO,nop,nop>
                +0    > S. 0:0(0) ack 1 <mss 1460,FO 3021b9d889017eeb,nop,nop>
                """);
            passes(addressed + """
                +0    < S 0:10(10) win 65535 <mss 1460,FO 3021b9d889017eeb,nop,nop>
                +0    > S. 0:0(0) ack 11 <mss 1460>
                """);
            // The cookie of the runner's own addresses is wrong at these: the server falls back to a cookie request.
            that(failure(addressed + """
                +0    < S 0:10(10) win 65535 <mss 1460,FO dd36de77b0e33091,nop,nop>
                +0    > S. 0:0(0) ack 11 <mss 1460>
                """).getMessage()).contains("t.pkt:9: ");
        }

        @Test
        void badAddressLinesAreNamed() {
            that(failure("--local_ip=192.168.0.300\n").getMessage()).startsWith("t.pkt:1: --local_ip: ");
            that(failure("--remote_ip=fd3d:fa7b::d17d::1\n").getMessage()).startsWith("t.pkt:1: --remote_ip: ");
            passes("--remote_ip=fd3d:fa7b:d17d::1\n" + PASSIVE_OPEN); // IPv6 run_all.py's: left out
            that(failure("--netmask_ip=255.0.255.0\n").getMessage()).isEqualTo("t.pkt:1: --netmask_ip=255.0.255.0 "
                + "is not a netmask: its ones must come first, like 255.255.0.0");
            that(failure("--local_ip=198.18.0.1\n--remote_ip=198.18.0.1\n" + LISTEN).getMessage())
                .startsWith("t.pkt:2: Tern and the remote have the same address 198.18.0.1");
        }

        @Test
        void aFastOpenOptionTheLineDoesNotHaveOrAnotherKindFails() {
            that(failure(FAST_OPEN_LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460,FO,nop,nop>
                +0    > S. 0:0(0) ack 1 <mss 1460>
                """).getMessage()).contains("t.pkt:7: ").contains("a Fast Open option the line does not have");
            that(failure(FAST_OPEN_LISTEN + """
                +0    < S 0:0(0) win 65535 <mss 1460,FO,nop,nop>
                +0    > S. 0:0(0) ack 1 <mss 1460,FOEXP TFO_COOKIE>
                """).getMessage()).contains("FO dd36de77b0e33091, not FOEXP TFO_COOKIE");
        }

        @Test
        void badFastOpenOptionsKeysAndSocketOptionsAreNamed() {
            that(failure(FAST_OPEN_LISTEN + "+0 < S 0:0(0) win 65535 <mss 1460,FO 123>\n").getMessage())
                .startsWith("t.pkt:6: bad Fast Open cookie '123': an even number of hexadecimal digits");
            that(failure(FAST_OPEN_LISTEN + "+0 < S 0:0(0) win 65535 <FO 1234 5678>\n").getMessage())
                .startsWith("t.pkt:6: bad Fast Open option 'FO 1234 5678'");
            that(failure("`sysctl -q net.ipv4.tcp_fastopen_key=1-2-3`\n").getMessage())
                .startsWith("t.pkt:1: sysctl net.ipv4.tcp_fastopen_key: a Fast Open key is four hexadecimal words");
            passes(FAST_OPEN_LISTEN + """
                +0    setsockopt(3, SOL_TCP, TCP_FASTOPEN_KEY, "", 0) = -1 EINVAL (Invalid argument)
                +0    setsockopt(3, SOL_TCP, TCP_FASTOPEN_KEY, "\\x01\\x02", 3) = -1 EINVAL (Invalid argument)
                """);
            that(failure(FAST_OPEN_LISTEN + "+0 setsockopt(3, SOL_TCP, TCP_FASTOPEN_KEY, \"\\x01\", 16) = 0\n")
                .getMessage()).isEqualTo("t.pkt:6: TCP_FASTOPEN_KEY's string has 1 bytes, fewer than the length 16 "
                    + "the call gives");
        }

        @Test
        void aListenersOwnKeyMakesItsCookies() {
            // The key of packetdrill's sockopt-fastopen-key.pkt, as its 16 bytes.
            passes(FAST_OPEN_LISTEN + """
                +0    setsockopt(3, SOL_TCP, TCP_FASTOPEN_KEY,
                          "\\xf7\\x63\\xbf\\xa0\\x81\\x3d\\x80\\xed\\x30\\x1d\\x64\\xcd\\x90\\x4a\\xbc\\xce", 16) = 0
                +0    < S 0:0(0) win 65535 <mss 1460,FO,nop,nop>
                +0    > S. 0:0(0) ack 1 <mss 1460,FO %s,nop,nop>
                """.formatted(String.format("%016x", dev.tern.tcp.FastOpenKeys.parse(
                    "a0bf63f7-ed803d81-cd641d30-cebc4a90").cookie(ScriptRunner.REMOTE_ADDRESS,
                    ScriptRunner.TERN_ADDRESS))));
        }

        @Test
        void sendtoWithMsgFastOpenConnectsAndOtherFlagsOnTcpAreNamed() {
            passes("""
                `sysctl -q net.ipv4.tcp_timestamps=0`
                0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0    fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
                +0    sendto(3, ..., 10, MSG_FASTOPEN, ..., ...) = -1 EINPROGRESS (Operation now in progress)
                +0    > S 0:0(0) <mss 1460,nop,nop,sackOK,nop,wscale 2,FO,nop,nop>
                """);
            // Without MSG_FASTOPEN a TCP sendto is a send, as Linux's: EPIPE before a connect.
            passes("""
                0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0    sendto(3, ..., 10, 0, ..., ...) = -1 EPIPE (Broken pipe)
                """);
            // MSG_FASTOPEN to AF_UNSPEC: nothing to connect to (Linux's tcp_sendmsg_fastopen), nothing sent.
            passes("""
                0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0    sendto(3, ..., 0, MSG_FASTOPEN, AF_UNSPEC, ...) = -1 EOPNOTSUPP (Operation not supported)
                """);
            that(failure("""
                0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0    send(3, ..., 10, MSG_FASTOPEN) = 10
                """).getMessage()).isEqualTo("t.pkt:2: send flag MSG_FASTOPEN is not supported: a Fast Open connect "
                    + "goes with sendto or sendmsg on a TCP socket, not this call");
            that(failure("""
                0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0    sendto(3, ..., 10, 0x10, ..., ...) = 10
                """).getMessage()).startsWith("t.pkt:2: sendto flags 0x10 are not supported: send flags are ");
            that(failure("`sysctl -q net.ipv4.tcp_fastopen_blackhole_timeout_sec=3600`\n").getMessage())
                .startsWith("t.pkt:1: tcp_fastopen_blackhole_timeout_sec=3600 is not supported");
            passes("`sysctl -q net.ipv4.tcp_fastopen_blackhole_timeout_sec=0`\n");
            // FreeBSD's client form: TCP_FASTOPEN before a sendto with no flags; the data waits for the handshake.
            passes("""
                `sysctl -q net.ipv4.tcp_timestamps=0`
                0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0    setsockopt(3, IPPROTO_TCP, TCP_FASTOPEN, [1], 4) = 0
                +0    sendto(3, ..., 100, 0, ..., ...) = 100
                +0    > S 0:0(0) <mss 1460,nop,nop,sackOK,nop,wscale 2,FO,nop,nop>
                +.01  < S. 0:0(0) ack 1 win 65535 <mss 1460,FO 0102030405060708,nop,nop>
                +0    > P. 1:101(100) ack 1
                """);
        }
}

    /** {@code --ip_version=ipv6}: TCP over IPv6 between the runner's remote (2001:db8::1) and Tern (2001:db8::2). */
    @Nested
    class OverIpv6 {
        private static final String DATA = PASSIVE_OPEN + """
            +0    < P. 1:101(100) ack 1 win 512
            +0    > . 1:1(0) ack 101
            +0    read(4, ..., 100) = 100
            +0    write(4, ..., 1000) = 1000
            +0    > P. 1:1001(1000) ack 101
            """;

        private void passes6(String script) {
            ScriptRunner.run("t.pkt", script, ScriptProfile.corpus(), null, ScriptIpVersion.IPV6);
        }

        @Test
        void aPassiveOpenAndDataBothWaysPassWithTheMssOfIpv4AsPacketdrillsMtuOf1520Gives() {
            passes6(DATA);
            passes("--ip_version=ipv6\n" + DATA);
            // Tern's MSS over IPv6 is the MTU less 60: at the runner's MTU of 1500 written out, 1440.
            that(assertThrows(ScriptException.class, () -> passes6("--mtu=1500\n" + PASSIVE_OPEN)).getMessage())
                .contains("mss 1440, not 1460");
        }

        @Test
        void anActiveOpenGoesToTheRemotesIpv6AddressAndAnIpv4ScriptLineIsTheScriptsIpVersion() {
            final String active = """
                0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
                +0    connect(3, ..., ...) = -1 EINPROGRESS
                +0    > S 0:0(0) <mss 1460,sackOK,TS val 100 ecr 0,nop,wscale 2>
                +0    < S. 0:0(0) ack 1 win 65535 <mss 1460>
                +0    > . 1:1(0) ack 1
                """;
            final String nonBlocking = active.replace("IPPROTO_TCP) = 3\n", "IPPROTO_TCP) = 3\n+0 fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0\n");
            passes6(nonBlocking);
            // A script's own line wins over the command line's version.
            ScriptRunner.run("t.pkt", "--ip_version=ipv4\n" + nonBlocking, ScriptProfile.corpus(), null,
                ScriptIpVersion.IPV6);
        }

        @Test
        void af_inet6SocketsAreTakenOnlyOverIpv6() {
            passes6("0 socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP) = 3\n");
            passes6("0 socket(AF_INET6, SOCK_DGRAM, IPPROTO_UDP) = 3\n");
            that(failure("0 socket(AF_INET6, SOCK_STREAM, IPPROTO_TCP) = 3\n").getMessage()).contains(
                "AF_INET6 with --ip_version=ipv6 or ipv4-mapped-ipv6");
        }
    }
}
