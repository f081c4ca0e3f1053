package dev.tern.script;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UDP, ICMPv6 and flow labels in scripts over IPv6 ({@code --ip_version=ipv6}): the scripts under resources/ipv6
 * pass, and each kind of line fails with {@code FILE:LINE: reason} where Tern's packet differs.
 */
class ScriptOverIpv6Test {
    private static String script(String name) {
        try (InputStream in = ScriptOverIpv6Test.class.getResourceAsStream("/ipv6/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    private static void passes(String text, ScriptIpVersion version) {
        ScriptRunner.run("t.pkt", text, ScriptProfile.corpus(), null, version);
    }

    private static void passes6(String text) {
        passes(text, ScriptIpVersion.IPV6);
    }

    private static String failure6(String text) {
        return assertThrows(ScriptException.class, () -> passes6(text)).getMessage();
    }

    private static void startsWith(String prefix, String actual) {
        assertTrue(actual.startsWith(prefix), () -> "expected a message starting with\n  " + prefix + "\nbut got\n  "
            + actual);
    }

    @Nested
    class Udp {
        @Test
        void aBoundSocketTakesADatagramAndAnswersItsSender() {
            passes6(script("udp-bound-socket.pkt"));
        }

        @Test
        void aDatagramOfTheWrongLengthFailsAtItsLine() {
            assertEquals("t.pkt:8: expected '8080>48001 udp (21)'; Tern sent '8080>48001 udp (20)' at 0.000000 s: "
                + "20 bytes, not 21", failure6(script("udp-bound-socket.pkt").replace("> 8080>48001 udp (20)",
                "> 8080>48001 udp (21)")));
        }

        @Test
        void aDatagramTernNeverGetsFailsTheRead() {
            // The remote's datagram to another port reaches no socket: recvfrom has nothing.
            startsWith("t.pkt:6: recvfrom returned -1 EAGAIN, the script expects 10", failure6(
                script("udp-bound-socket.pkt").replace("< 48001>8080 udp (10)", "< 48001>8081 udp (10)")));
        }

        @Test
        void ipHeaderFieldsOnDatagramsAreWrittenAndComparedOverEitherVersion() {
            final String fields = script("udp-bound-socket.pkt").replace("< 48001>8080 udp (10)",
                "< (tos 0x28) 48001>8080 udp (10)").replace("> 8080>48001 udp (20)", "> (tos 0x0) 8080>48001 udp (20)")
                + "+0    sendto(3, ..., 20, 0, ..., ...) = 20\n+0    > (ttl 64) udp (20)\n";
            passes6(fields);
            passes(fields.replace("AF_INET6", "AF_INET"), ScriptIpVersion.IPV4);
            assertEquals("t.pkt:10: expected '(ttl 63) udp (20)'; Tern sent '8080>48001 udp (20)' at 0.000000 s: "
                + "TTL 64, not 63", failure6(fields.replace("(ttl 64)", "(ttl 63)")));
            assertEquals("t.pkt:8: expected '(tos 0x10) 8080>48001 udp (20)'; Tern sent '8080>48001 udp (20)' at "
                + "0.000000 s: TOS 0x00, not 0x10", failure6(fields.replace("(tos 0x0)", "(tos 0x10)")));
            assertEquals("t.pkt:1: a flow label is compared on TCP segments only (it names a connection's label)",
                failure6("0 > (flowlabel 0x1) udp (20)\n"));
        }

        @Test
        void portUnreachableRefusesAConnectedSocketOverIpv6AndOverIpv4MappedAddresses() {
            passes6(script("udp-connected-refused.pkt"));
            // ipv4-mapped-ipv6: the AF_INET6 socket's peer is an IPv4 address and the wire IPv4, ICMP's names IPv4's.
            passes(script("udp-connected-refused.pkt"), ScriptIpVersion.IPV4_MAPPED_IPV6);
        }
    }

    @Nested
    class Icmpv6 {
        @Test
        void ternAnswersADatagramToAClosedPortWithPortUnreachableQuotingIt() {
            passes6(script("port-unreachable.pkt"));
        }

        @Test
        void anotherCodeOrQuoteFailsNamingWhatTernSent() {
            assertEquals("t.pkt:3: expected 'icmp unreachable no_route [48000>9 udp (10)]'; Tern sent '[udp (10)] icmp "
                    + "unreachable port_unreachable' at 0.000000 s: type 1 code 4, not type 1 code 0",
                failure6(script("port-unreachable.pkt").replace("port_unreachable [", "no_route [")));
            startsWith("t.pkt:3: expected 'icmp unreachable port_unreachable [48000>9 udp (11)]'; Tern sent",
                failure6(script("port-unreachable.pkt").replace("[48000>9 udp (10)]", "[48000>9 udp (11)]")));
        }

        @Test
        void anEchoRequestIsAnsweredAndAWrongIdentifierFails() {
            passes6(script("echo.pkt"));
            assertEquals("t.pkt:3: expected 'icmp echo_reply id 8 [raw (64)]'; Tern sent 'icmp echo_reply id 7 "
                + "[raw (64)]' at 0.000000 s: id 7, not 8", failure6(script("echo.pkt")
                .replace("> icmp echo_reply id 7", "> icmp echo_reply id 8")));
        }

        @Test
        void packetTooBigShrinksTheSegmentsAsFragmentationNeededDoesOverIpv4() {
            passes6(script("packet-too-big.pkt"));
            // Without the ICMPv6 message reaching TCP, Tern would not send the 1220-byte segment.
            startsWith("t.pkt:12: expected Tern to send '. 1:1221(1220) ack 1'", failure6(script("packet-too-big.pkt")
                .replace("+.01  < icmp packet_too_big mtu 1280 [1:1461(1460)]\n", "")));
            // One quoting a sequence number not in flight is not about the connection (RFC 5927 §4.1): TCP sends
            // nothing at once (the retransmission comes at the RTO).
            startsWith("t.pkt:13: expected Tern to send '. 1:1221(1220) ack 1' at 0.010000 s, but Tern sent nothing",
                failure6(script("packet-too-big.pkt")
                .replace("[1:1461(1460)]", "[5000:5001(1)]")));
        }

        @Test
        void ipHeaderFieldsOnIcmpLinesAreWrittenAndCompared() {
            final String fields = script("echo.pkt").replace("< icmp echo_request id 7", "< (ttl 1) icmp echo_request id 7")
                .replace("> icmp echo_reply id 7", "> (tos 0x0) icmp echo_reply id 7");
            passes6(fields);
            // Over IPv4 an echo request without [raw (N)] has room for an IPv4 header and 8 bytes, not IPv6's.
            passes(fields.replace("[raw (56)]", "[raw (36)]"), ScriptIpVersion.IPV4);
            assertEquals("t.pkt:3: expected '(ttl 2) icmp echo_reply id 7 [raw (64)]'; Tern sent 'icmp echo_reply id 7 "
                + "[raw (64)]' at 0.000000 s: TTL 64, not 2", failure6(fields.replace("(tos 0x0)", "(ttl 2)")));
        }

        @Test
        void anUnreachableEndsAConnectAsItsCodeSaysOverEitherVersion() {
            final String refused = script("unreachable-connect.pkt");
            passes6(refused);
            passes(refused, ScriptIpVersion.IPV4);
            final String noRoute = refused.replace("port_unreachable", "net_unreachable").replace("ECONNREFUSED",
                "ENETUNREACH");
            passes6(noRoute);
            passes(noRoute, ScriptIpVersion.IPV4);
            passes6(refused.replace("port_unreachable", "admin_prohibited").replace("ECONNREFUSED", "EHOSTUNREACH"));
            passes6(refused.replace("unreachable port_unreachable", "time_exceeded exceeded_hop_limit")
                .replace("ECONNREFUSED", "EHOSTUNREACH"));
            startsWith("t.pkt:6: getsockopt SOL_SOCKET SO_ERROR gave [ECONNREFUSED], the script expects [EHOSTUNREACH]",
                failure6(refused.replace("[ECONNREFUSED]", "[EHOSTUNREACH]")));
        }

        @Test
        void ipv4sNamesAndFieldsAreRefusedOverIpv6AtTheirLine() {
            assertEquals("t.pkt:1: unreachable frag_needed is IPv4's: over IPv6 the path's MTU comes in icmp "
                + "packet_too_big mtu N (RFC 4443 §3.2)", failure6("0 < icmp unreachable frag_needed mtu 1200\n"));
            startsWith("t.pkt:1: unknown ICMPv6 unreachable code 'host_unreachable' (write code_N for one by number; "
                + "known: address_unreachable, admin_prohibited, ", failure6("0 < icmp unreachable host_unreachable\n"));
            // Tern's short names of unreachable's codes, port and net, are ICMPv6's codes 4 and 0 over IPv6.
            passes6(script("port-unreachable.pkt").replace("port_unreachable [", "port ["));
            startsWith("t.pkt:1: unknown ICMPv6 type 'source_quench'", failure6("0 < icmp source_quench\n"));
            assertEquals("t.pkt:1: 'mtu N' belongs to packet_too_big only over IPv6",
                failure6("0 < icmp unreachable port_unreachable mtu 1200\n"));
            // Over IPv4 the IPv6 names are unknown, as packetdrill's tables are per family.
            startsWith("t.pkt:1: unknown ICMP type 'packet_too_big'", assertThrows(ScriptException.class,
                () -> passes("0 < icmp packet_too_big mtu 1280\n", ScriptIpVersion.IPV4)).getMessage());
        }
    }

    /** FreeBSD's suite over IPv6: its scripts carry their own --ip_version=ipv6 line and run at an MTU of 1500. */
    @Nested
    class FreeBsdSuite {
        private static final String OPEN = """
            --ip_version=ipv6
            0.000 socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
            +0    fcntl(3, F_SETFL, O_RDWR|O_NONBLOCK) = 0
            +0    connect(3, ..., ...) = -1 EINPROGRESS (Operation now in progress)
            +0    > S 0:0(0) win 65535 <mss 1440,nop,wscale 6,sackOK,TS val 100 ecr 0>
            +.1   < S. 0:0(0) ack 1 win 65535 <mss 1440,sackOK,eol,eol>
            +0    > . 1:1(0) ack 1 win 65535
            +0    `sockstat -6 -P tcp -s | grep packetdril | grep -c ESTABLISHED | grep 1`
            +0    `sockstat -4 -P tcp -s | grep packetdril | grep -c ESTABLISHED | grep 0`
            """;

        @Test
        void anActiveOpenOffersTheMssOfAnMtuOf1500AndSockstatListsItsSocketUnderIpv6() {
            ScriptRunner.run("t.pkt", OPEN, ScriptProfile.freebsd());
            assertEquals("t.pkt:9: `sockstat -4 -P tcp -s | grep packetdril | grep -c ESTABLISHED | grep 1`: 0 TCP "
                + "sockets of the application are in ESTABLISHED, not 1 (sockstat -4 lists none of this run's IPv6 "
                + "sockets)", assertThrows(ScriptException.class, () -> ScriptRunner.run("t.pkt",
                OPEN.replace("ESTABLISHED | grep 0", "ESTABLISHED | grep 1"), ScriptProfile.freebsd())).getMessage());
        }
    }

    /** FreeBSD's packetdrill names IPv6's fields by their own names: (class 0xNN) and (hlim N). */
    @Test
    void trafficClassAndHopLimitAreTosAndTtlByIpv6sNames() {
        final String passive = """
            0     socket(..., SOCK_STREAM, IPPROTO_TCP) = 3
            +0    bind(3, ..., ...) = 0
            +0    listen(3, 1) = 0
            +0    < (hlim 3) S 0:0(0) win 65535 <mss 1460>
            +0    > (class 0x0) S. 0:0(0) ack 1 <mss 1460>
            +0    < (class 0x28) . 1:1(0) ack 1 win 65535
            +0    accept(3, ..., ...) = 4
            +0    write(4, ..., 100) = 100
            +0    > (hlim 64) P. 1:101(100) ack 1
            """;
        passes6(passive);
        assertEquals("t.pkt:9: expected '(hlim 4) P. 1:101(100) ack 1'; Tern sent 'P. 1:101(100) ack 1 win 65535' at "
            + "0.000000 s: TTL 64, not 4", failure6(passive.replace("(hlim 64)", "(hlim 4)")));
        assertEquals("t.pkt:1: class 0x100 is more than 8 bits", failure6("0 < (class 0x100) S 0:0(0)\n"));
    }

    @Nested
    class FlowLabels {
        @Test
        void oneNameStandsForTheConnectionsOneLabelAndAnInjectedLabelIsCarried() {
            passes6(script("flowlabel.pkt"));
            // Over IPv4 a flow label is not compared, as packetdrill's.
            passes(script("flowlabel.pkt"), ScriptIpVersion.IPV4);
        }

        @Test
        void anotherNameForTheSameLabelFails() {
            startsWith("t.pkt:13: expected '(tos 0x0, flowlabel 0x2) P. 101:201(100) ack 1'; Tern sent 'P. "
                + "101:201(100) ack 1 win 65535' at 0.020000 s: the same flow label 0x", failure6(script("flowlabel.pkt")
                .replace("(tos 0x0, flowlabel 0x1)", "(tos 0x0, flowlabel 0x2)")));
        }

        @Test
        void aLabelOutOfItsTwentyBitsFailsAtItsLine() {
            assertEquals("t.pkt:1: flowlabel 0x100000 is more than 20 bits",
                failure6("0 > (flowlabel 0x100000) S 0:0(0)\n"));
        }
    }
}
