package dev.tern.script;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The two public suites' dialects: conditional lines and symbols, the Linux suite's and FreeBSD's shell lines and
 * option lines, the freebsd profile (its window, scale, SO_RCVBUF, state names, sockstat) and packetdrill's
 * tolerance share.
 */
class ScriptDialectsTest {
    private static final String LISTEN = """
        0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
        +0    bind(3, ..., ...) = 0
        +0    listen(3, 1) = 0
        """;

    private static String failure(String script, ScriptProfile profile) {
        return assertThrows(ScriptException.class, () -> ScriptRunner.run("t.pkt", script, profile)).getMessage();
    }

    private static void passes(String script, ScriptProfile profile) {
        ScriptRunner.run("t.pkt", script, profile);
    }

    private static void rejects(String script, ScriptProfile profile, String prefix) {
        startsWith(failure(script, profile), prefix);
    }

    private static void startsWith(String message, String prefix) {
        assertTrue(message.startsWith(prefix), () -> "expected a message starting with\n  " + prefix + "\nbut got\n  "
            + message);
    }

    @Nested
    class Conditionals {
        @Test
        void aBlockWithoutItsEndIsRejectedAtItsStart() {
            assertEquals("t.pkt:2: this #ifdef or #ifndef has no #endif",
                failure(LISTEN.lines().findFirst().orElseThrow() + "\n#ifdef FreeBSD\n+0 close(3) = 0\n",
                    ScriptProfile.corpus()));
            assertEquals("t.pkt:1: #endif without an #ifdef or #ifndef before it",
                failure("#endif\n", ScriptProfile.corpus()));
            assertEquals("t.pkt:3: a second #else for the #ifdef of line 1",
                failure("#ifdef X\n#else\n#else\n#endif\n", ScriptProfile.corpus()));
            assertEquals("t.pkt:1: #ifdef takes one name, like #ifdef FreeBSD, not 'A B'",
                failure("#ifdef A B\n#endif\n", ScriptProfile.corpus()));
            assertEquals("t.pkt:2: #endif takes nothing after it, not 'X'",
                failure("#ifdef X\n#endif X\n", ScriptProfile.corpus()));
        }

        @Test
        void theProfilesSystemAndDefinitionsChooseTheBlock() {
            final String script = "#ifdef FreeBSD\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3\n#else\n"
                + "0 close(9) = 0\n#endif\n";
            passes(script, ScriptProfile.freebsd());
            rejects(script, ScriptProfile.linux(), "t.pkt:4: close on file descriptor 9");
            passes(script, ScriptProfile.linux().withDefinitions(List.of("FreeBSD")));
            // A nested block inside a dropped one stays dropped, whatever its own name says.
            passes("#ifdef STANDARD\n#ifdef Linux\n0 close(9) = 0\n#endif\n#endif\n", ScriptProfile.linux());
        }

        @Test
        void symbolsStandForTheirValuesOutsideCommentsQuotesAndShellLines() {
            passes("--define=FD=3\n0 socket(..., SOCK_STREAM, IPPROTO_TCP) = FD // FD in a comment\n"
                + "+0 close(FD) = 0\n", ScriptProfile.corpus());
            passes("0 socket(..., SOCK_STREAM, IPPROTO_TCP) = FD\n+0 close(3) = 0\n",
                ScriptProfile.corpus().withDefinitions(List.of("FD=3")));
            assertEquals("t.pkt:1: bad definition '=3': write NAME=VALUE or NAME",
                failure("--define==3\n", ScriptProfile.corpus()));
            final IllegalArgumentException bad = assertThrows(IllegalArgumentException.class,
                () -> ScriptProfile.linux().withDefinitions(List.of("9X=1")));
            assertEquals("bad definition '9X=1': write NAME=VALUE or NAME", bad.getMessage());
        }
    }

    @Nested
    class ShellLines {
        @Test
        void theLinuxSuitesDefaultsNeedItsProfile() {
            passes("`../../common/defaults.sh`\n" + LISTEN, ScriptProfile.gtests());
            rejects("`../common/defaults.sh`\n" + LISTEN, ScriptProfile.linux(),
                "t.pkt:1: '../common/defaults.sh' sets the production settings of packetdrill's Linux suite, which "
                    + "the profile gtests holds: run with --profile gtests");
        }

        @Test
        void otherCommandsAndValuesAreRejectedByName() {
            rejects("`tc qdisc add dev tun0 root pfifo`\n", ScriptProfile.gtests(),
                "t.pkt:1: shell command 'tc qdisc add dev tun0 root pfifo' is not supported");
            rejects("`sysctl -w net.inet.tcp.insecure_rst=1`\n", ScriptProfile.freebsd(),
                "t.pkt:1: sysctl net.inet.tcp.insecure_rst=1 is not supported: Tern checks a RST as RFC 5961 §3 says");
            rejects("`sysctl -w net.inet.tcp.ecn.enable=1`\n", ScriptProfile.freebsd(),
                "t.pkt:1: sysctl net.inet.tcp.ecn.enable=1 is not supported: Tern has no ECN");
            rejects("`set_sysctls.py net.ipv4.tcp_sack=0`\n", ScriptProfile.gtests(),
                "t.pkt:1: shell command 'set_sysctls.py net.ipv4.tcp_sack=0' is not supported");
            rejects("`../common/set_sysctls.py tcp_sack=0`\n", ScriptProfile.gtests(),
                "t.pkt:1: set_sysctls.py takes /proc/sys/NAME=VALUE, not 'tcp_sack=0'");
            startsWith(failure("`sockstat -6 -P tcp -s | grep packetdril | grep -c TIME_WAIT | grep 1`\n",
                ScriptProfile.freebsd()), "t.pkt:1: sockstat -6 needs IPv6");
            rejects("`sysctl -q net.ipv4.tcp_mem=\"1 2\"`\n", ScriptProfile.linux(),
                "t.pkt:1: sysctl net.ipv4.tcp_mem takes 3 numbers between quotes, got 2");
        }

        @Test
        void aSettingThatChangesTheRunningStackIsRejected() {
            startsWith(failure(LISTEN + "+0 `sysctl -w net.inet.tcp.recvspace=1024`\n+0 close(3) = 0\n",
                ScriptProfile.freebsd()), "t.pkt:4: sysctl net.inet.tcp.recvspace changes Tern's configuration "
                + "after the script has started");
        }
    }

    @Nested
    class OptionLines {
        @Test
        void optionsAreReadOrRejectedWithTheReason() {
            passes("--ip_version=ipv4\n--local_ip=192.168.0.1\n--remote_ip=192.0.2.1\n--gateway_ip=192.168.0.2\n"
                + "--netmask_ip=255.255.0.0\n" + LISTEN, ScriptProfile.corpus());
            assertEquals("t.pkt:1: --ip_version=ipv4-mapped-ipv6 needs IPv6, which Tern's runner does not have "
                + "(--ip_version=ipv4 is taken)", failure("--ip_version=ipv4-mapped-ipv6\n", ScriptProfile.corpus()));
            rejects("--udp_encapsulation=sctp\n", ScriptProfile.freebsd(), "t.pkt:1: command-line option "
                + "'--udp_encapsulation' is not supported: it runs TCP over UDP");
            assertEquals("t.pkt:1: --mtu=60 is below IPv4's minimum of 68 (RFC 791)",
                failure("--mtu=60\n", ScriptProfile.corpus()));
            assertEquals("t.pkt:1: --tolerance_percent takes a percentage from 0 to 100, like "
                + "--tolerance_percent=12.5", failure("--tolerance_percent=150\n", ScriptProfile.corpus()));
            assertEquals("t.pkt:1: --mss takes a number of bytes, like --mss=1000",
                failure("--mss=big\n", ScriptProfile.corpus()));
        }

        @Test
        void theToleranceGrowsWithTheTimeSinceTheLineBeforeAsPacketdrills() {
            // The SYN-ACK goes again after the initial RTO, 1 s; the script says 0.9 s after the first, 100 ms off.
            // The fixed 4 ms does not take it, 10 % of the 0.9 s since the line before (90 ms) neither; 12.5 %,
            // packetdrill's default and that of the profiles for other stacks' scripts (112.5 ms), does.
            final String late = LISTEN + "+0 < S 0:0(0) win 65535 <mss 1460>\n+0 > S. 0:0(0) ack 1 <mss 1460>\n"
                + "+.9 > S. 0:0(0) ack 1 <mss 1460>\n";
            rejects(late, ScriptProfile.bare(), "t.pkt:6: expected Tern to send 'S. 0:0(0) ack 1 "
                + "<mss 1460>' at 0.900000 s, but Tern sent nothing by 0.904000 s");
            rejects("--tolerance_percent=10\n" + late, ScriptProfile.bare(),
                "t.pkt:7: expected Tern to send 'S. 0:0(0) ack 1 <mss 1460>' at 0.900000 s, but Tern sent nothing by "
                    + "0.990000 s");
            passes("--tolerance_percent=12.5\n" + late, ScriptProfile.bare());
            passes(late.replace("> S. 0:0(0) ack 1 <mss 1460>", "> S. 0:0(0) ack 1 <...>"), ScriptProfile.linux());
        }
    }

    @Nested
    class FreeBsdProfile {
        private static final String OPEN = """
            0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
            +0    fcntl(3, F_SETFL, O_RDWR | O_NONBLOCK) = 0
            +0    getsockopt(3, SOL_SOCKET, SO_RCVBUF, [65536], [4]) = 0
            +0    connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
            +0    > S 0:0(0) win 65535 <mss 1460,nop,wscale 6,sackOK,TS val 100 ecr 0>
            +0    %{ assert tcpi_state == TCPI_SYN_SENT }%
            +.1   < S. 0:0(0) ack 1 win 65535 <mss 1460,sackOK,eol,eol>
            +0    > . 1:1(0) ack 1 win 65535
            +0    getsockopt(3, SOL_SOCKET, SO_RCVBUF, [65700], [4]) = 0
            +0    getsockopt(3, SOL_SOCKET, SO_SNDBUF, [33580], [4]) = 0
            +0    %{ assert tcpi_state == TCPI_ESTABLISHED }%
            +0    `sockstat -4 -P tcp -s | grep packetdril | grep -c ESTABLISHED | grep 1`
            """;

        @Test
        void itOffersFreeBsdsWindowAndScaleAndReportsItsBufferAndStates() {
            passes(OPEN, ScriptProfile.freebsd());
            startsWith(failure(OPEN + "+0 `sockstat -4 -P tcp -p 8080 -s | grep -c ESTABLISHED | grep 0`\n",
                ScriptProfile.freebsd()), "t.pkt:13: `sockstat -4 -P tcp -p 8080 -s | grep -c ESTABLISHED | grep 0`: "
                + "1 TCP socket of the application is in ESTABLISHED, not 0");
            // Linux's names are not FreeBSD's: a FreeBSD name under a Linux profile is no name at all.
            rejects(LISTEN + "+0 %{ assert tcpi_state == TCPI_LISTEN }%\n", ScriptProfile.linux(),
                "t.pkt:4: Python block: 'assert tcpi_state == TCPI_LISTEN' is not supported: 'TCPI_LISTEN' is "
                    + "neither");
            passes(LISTEN + "+0 %{ assert tcpi_state == TCPI_LISTEN }%\n"
                + "+0 getsockopt(3, IPPROTO_TCP, TCP_INFO, {tcpi_state=TCPI_LISTEN}, [...]) = 0\n",
                ScriptProfile.freebsd());
        }

        /** A cookie request the SYN-ACK leaves unanswered; the peer then resets the connection. */
        private static final String UNANSWERED_REQUEST = """
            +0    socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
            +0    setsockopt(3, IPPROTO_TCP, TCP_FASTOPEN, [1], 4) = 0
            +0    sendto(3, ..., 10, 0, ..., ...) = 10
            +0    > S 0:0(0) win 65535 <mss 1460,nop,wscale 6,sackOK,TS val 0 ecr 0,FO,eol,eol>
            +.01  < S. 0:0(0) ack 1 win 65535 <mss 1460>
            +0    > P. 1:11(10) ack 1 win 65535
            +0    < R. 1:1(0) ack 11 win 0
            +0    close(3) = 0
            +0    socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
            +0    setsockopt(3, IPPROTO_TCP, TCP_FASTOPEN, [1], 4) = 0
            +0    sendto(3, ..., 10, 0, ..., ...) = 10
            """;

        @Test
        void aFailedFastOpenTurnsItOffTowardsTheServerUnlessPathDisableTimeIsZero() {
            passes("0 `sysctl -w net.inet.tcp.fastopen.client_enable=1`\n" + UNANSWERED_REQUEST
                + "+0    > S 0:0(0) win 65535 <mss 1460,nop,wscale 6,sackOK,TS val 0 ecr 0>\n",
                ScriptProfile.freebsd());
            passes("0 `sysctl -w net.inet.tcp.fastopen.path_disable_time=0`\n" + UNANSWERED_REQUEST
                + "+0    > S 0:0(0) win 65535 <mss 1460,nop,wscale 6,sackOK,TS val 0 ecr 0,FO,eol,eol>\n",
                ScriptProfile.freebsd());
            rejects("0 `sysctl -w net.inet.tcp.fastopen.path_disable_time=-1`\n", ScriptProfile.freebsd(),
                "t.pkt:1: net.inet.tcp.fastopen.path_disable_time takes 0 to ");
        }

        @Test
        void theSuitesPacketFormsAreReadOrRejectedWithTheReason() {
            // "...(0)": any sequence number; "[noecn]": the IP ECN field Tern always has; "+ 0.00": a spaced time.
            passes(LISTEN.replace("+0    bind", "+ 0.00 bind") + """
                +0    <[noecn] S 0:0(0) win 32767 <mss 1460,sackOK,eol,eol>
                +0    > S. ...(0) ack 1 win 65535 <mss 1460,sackOK,eol,eol>
                """, ScriptProfile.freebsd());
            rejects(LISTEN + "+0 < S ...(0) win 100\n", ScriptProfile.freebsd(),
                "t.pkt:4: '...(N)' (any sequence number) is only for packets Tern sends (>)");
            rejects(LISTEN + "+0 <[ect0] S 0:0(0) win 100\n", ScriptProfile.freebsd(),
                "t.pkt:4: [ect0] (an ECN-capable IP field) is not supported: Tern has no ECN");
            rejects(LISTEN + "+0 < (tos 0x28) S 0:0(0) win 100\n", ScriptProfile.freebsd(),
                "t.pkt:4: IP header fields on a packet ('(tos 0x28)') are not supported");
        }

        @Test
        void aResultWithoutItsErrnoComparesTheResultOnly() {
            final String nonBlocking = LISTEN + "+0 fcntl(3, F_SETFL, O_RDWR | O_NONBLOCK) = 0\n";
            passes(nonBlocking + "+0 accept(3, ..., ...) = -1\n", ScriptProfile.linux());
            rejects(nonBlocking + "+0 accept(3, ..., ...) = 4\n", ScriptProfile.linux(),
                "t.pkt:5: accept returned -1 EAGAIN, the script expects 4");
            rejects(LISTEN + "+0 close(3) = -1\n", ScriptProfile.linux(),
                "t.pkt:4: close returned 0, the script expects -1");
        }

        @Test
        void ewouldblockIsEagainsOtherName() {
            passes(LISTEN + "+0 fcntl(3, F_SETFL, O_RDWR | O_NONBLOCK) = 0\n"
                + "+0 accept(3, ..., ...) = -1 EWOULDBLOCK (Resource temporarily unavailable)\n",
                ScriptProfile.freebsd());
        }
    }
}
