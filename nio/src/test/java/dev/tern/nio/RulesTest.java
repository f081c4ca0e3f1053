package dev.tern.nio;

import dev.tern.core.net.InterfaceAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

import static dev.tern.nio.Rules.Side.KERNEL;
import static dev.tern.nio.Rules.Side.TERN;
import static dev.tern.nio.Rules.Transport.TCP;
import static dev.tern.nio.Rules.Transport.UDP;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RulesTest {
    private static final InterfaceAddress TERN_ADDRESS = InterfaceAddress.parse("198.18.0.2/24");

    private static InetSocketAddress at(String address, int port) {
        try {
            return new InetSocketAddress(InetAddress.getByName(address), port);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void byDefaultADestinationOnTernsSubnetGoesToTernAndAnyOtherToTheKernel() {
        final Rules rules = Rules.defaults(TERN_ADDRESS);
        assertEquals(TERN, rules.connect(TCP, at("198.18.0.1", 80)));
        assertEquals(KERNEL, rules.connect(TCP, at("198.19.0.1", 80)));
        assertEquals(KERNEL, rules.connect(UDP, at("10.1.2.3", 53)));
    }

    @Test
    void loopbackIpv6AndUnresolvedDestinationsGoToTheKernelWhateverTheRulesSay() {
        final Rules rules = Rules.parse("tern connect *\ntern listen *", "inline", TERN_ADDRESS);
        assertEquals(KERNEL, rules.connect(TCP, at("127.0.0.1", 5432)));
        assertEquals(KERNEL, rules.connect(TCP, at("::1", 5432)));
        assertEquals(KERNEL, rules.connect(TCP, InetSocketAddress.createUnresolved("db.example", 5432)));
        assertEquals(KERNEL, rules.listen(TCP, at("127.0.0.1", 8080)));
    }

    @Test
    void theFirstMatchingRuleWinsByPrefixPortRangeAndTransport() {
        final Rules rules = Rules.parse("""
            kernel connect 198.18.0.9:5432 tcp   # the database
            tern   connect 198.18.0.0/15
            kernel connect 10.0.0.0/8:1000-2000 udp
            tern   connect 10.0.0.0/8
            """, "rules.conf", TERN_ADDRESS);
        assertEquals(KERNEL, rules.connect(TCP, at("198.18.0.9", 5432)));
        assertEquals(TERN, rules.connect(UDP, at("198.18.0.9", 5432)), "the first rule is for TCP only");
        assertEquals(TERN, rules.connect(TCP, at("198.19.255.1", 80)), "a /15 reaches beyond Tern's /24");
        assertEquals(KERNEL, rules.connect(UDP, at("10.9.9.9", 1500)));
        assertEquals(TERN, rules.connect(UDP, at("10.9.9.9", 2001)));
        assertEquals(TERN, rules.connect(TCP, at("10.9.9.9", 1500)));
    }

    @Test
    void aBindToTheWildcardOrTernsAddressIsTernsAndToAnotherHostAddressTheKernels() {
        final Rules rules = Rules.parse("kernel listen *:5432\nkernel listen *:9000-9100 udp", "inline", TERN_ADDRESS);
        assertEquals(TERN, rules.listen(TCP, null));
        assertEquals(TERN, rules.listen(TCP, at("0.0.0.0", 8080)));
        assertEquals(TERN, rules.listen(TCP, at("::", 8080)));
        assertEquals(TERN, rules.listen(TCP, at("198.18.0.2", 8080)));
        assertEquals(KERNEL, rules.listen(TCP, at("192.0.2.7", 8080)), "a host address only the kernel has");
        assertEquals(KERNEL, rules.listen(TCP, at("0.0.0.0", 5432)));
        assertEquals(KERNEL, rules.listen(UDP, at("0.0.0.0", 9050)));
        assertEquals(TERN, rules.listen(TCP, at("0.0.0.0", 9050)));
    }

    @Test
    void groupsAreJoinedOnTernUnlessARuleSaysOtherwise() throws UnknownHostException {
        final Rules rules = Rules.parse("kernel join 239.255.0.0/16", "inline", TERN_ADDRESS);
        assertEquals(TERN, rules.join(InetAddress.getByName("239.1.2.3")));
        assertEquals(KERNEL, rules.join(InetAddress.getByName("239.255.0.1")));
        assertEquals(KERNEL, rules.join(InetAddress.getByName("ff02::1")));
    }

    @Test
    void linkFailureKernelIsRemembered() {
        assertFalse(Rules.defaults(TERN_ADDRESS).kernelOnLinkFailure());
        assertTrue(Rules.parse("link-failure kernel", "inline", TERN_ADDRESS).kernelOnLinkFailure());
        assertTrue(Rules.defaults(TERN_ADDRESS).then(Rules.parse("link-failure kernel", "x", TERN_ADDRESS)).kernelOnLinkFailure());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiterString = "=>", value = {
        "tarn connect *                   => rules.conf:2: unknown side 'tarn' (want tern or kernel)",
        "tern dial *                      => rules.conf:2: unknown operation 'dial' (want connect, listen or join)",
        "tern connect 198.18.0/24         => rules.conf:2: bad address '198.18.0/24' (want A.B.C.D[/PREFIX] or *)",
        "tern connect 198.18.0.0/33       => rules.conf:2: bad prefix length in '198.18.0.0/33' (want 0..32)",
        "tern connect *:70000             => rules.conf:2: bad port '70000' (want 0..65535)",
        "tern connect *:90-80             => rules.conf:2: port range 90-80 is empty",
        "tern connect * sctp              => rules.conf:2: unknown transport 'sctp' (want tcp or udp)",
        "tern connect                     => rules.conf:2: want SIDE OPERATION ADDRESS[/PREFIX][:PORT[-PORT]] [tcp|udp], got 'tern connect'",
        "link-failure maybe               => rules.conf:2: link-failure wants 'kernel' or 'fail', got 'link-failure maybe'",
    })
    void aMalformedLineIsOneMessageNamingTheSourceTheLineAndTheReason(String line, String message) {
        final Rules.RulesException e = assertThrows(Rules.RulesException.class,
            () -> Rules.parse("# first line is fine\n" + line.strip() + "\n", "rules.conf", TERN_ADDRESS));
        assertEquals(message.strip(), e.getMessage());
    }

    // ---------------------------------------------------------------------------------------------------- IPv6

    private static final java.util.List<dev.tern.core.net.Ipv6InterfaceAddress> TERN_IPV6 =
        java.util.List.of(dev.tern.core.net.Ipv6InterfaceAddress.parse("2001:db8::2/64"));

    @Test
    void withIpv6ADestinationOnTernsIpv6PrefixGoesToTernOverTcpAndUdp() {
        final Rules rules = Rules.defaults(TERN_ADDRESS).withIpv6(TERN_IPV6);
        assertEquals(TERN, rules.connect(TCP, at("2001:db8::1", 80)));
        assertEquals(KERNEL, rules.connect(TCP, at("2001:db8:1::1", 80)), "off Tern's /64");
        assertEquals(TERN, rules.connect(UDP, at("2001:db8::1", 53)), "Tern's datagram channels are dual-stack");
        assertEquals(KERNEL, rules.connect(UDP, at("2001:db8:1::1", 53)));
        assertEquals(KERNEL, rules.connect(TCP, at("::1", 80)));
        assertEquals(TERN, rules.connect(TCP, at("198.18.0.1", 80)), "IPv4 as before");
        assertEquals(KERNEL, Rules.defaults(TERN_ADDRESS).connect(TCP, at("2001:db8::1", 80)),
            "a stack without IPv6 serves none");
    }

    @Test
    void aBindToTernsIpv6AddressOrTheWildcardIsTernsAndToAnotherIpv6AddressTheKernels() {
        final Rules rules = Rules.defaults(TERN_ADDRESS).withIpv6(TERN_IPV6);
        assertEquals(TERN, rules.listen(TCP, at("2001:db8::2", 8080)));
        assertEquals(TERN, rules.listen(TCP, at("::", 8080)));
        assertEquals(KERNEL, rules.listen(TCP, at("2001:db8::7", 8080)), "an address of the host's, not Tern's");
        assertEquals(TERN, rules.listen(UDP, at("2001:db8::2", 53)));
        assertEquals(KERNEL, rules.listen(UDP, at("2001:db8::7", 53)));
    }

    @Test
    void anIpv6GroupIsTernsWhenItsStackHasIpv6AndARuleMaySendItToTheKernel() throws Exception {
        final java.net.InetAddress group = java.net.InetAddress.getByName("ff02::1:3");
        assertEquals(KERNEL, Rules.defaults(TERN_ADDRESS).join(group), "a stack without IPv6 joins none");
        assertEquals(TERN, Rules.defaults(TERN_ADDRESS).withIpv6(TERN_IPV6).join(group));
        assertEquals(KERNEL, Rules.parse("kernel join ff02::/16", "rules.conf", TERN_ADDRESS).withIpv6(TERN_IPV6)
            .join(group));
    }

    @Test
    void ipv6RulesTakePrefixesAndBracketedPortsAndMatchOnlyIpv6() {
        final Rules rules = Rules.parse("""
            kernel connect [2001:db8::9]:5432 tcp
            tern   connect 2001:db8:ff00::/40
            kernel connect [2001:db8::/32]:1000-2000
            kernel connect 198.18.0.0/15:80
            """, "rules.conf", TERN_ADDRESS).withIpv6(TERN_IPV6);
        assertEquals(KERNEL, rules.connect(TCP, at("2001:db8::9", 5432)));
        assertEquals(TERN, rules.connect(TCP, at("2001:db8::9", 5433)), "on Tern's prefix by default");
        assertEquals(TERN, rules.connect(TCP, at("2001:db8:ff12::1", 80)), "off link, sent to Tern by a rule");
        assertEquals(KERNEL, rules.connect(TCP, at("2001:db8::1", 1500)));
        assertEquals(TERN, rules.connect(TCP, at("2001:db8::1", 80)), "an IPv4 rule does not match IPv6");
        assertEquals(KERNEL, rules.connect(TCP, at("198.18.0.1", 80)));
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
        "tern connect 2001:db8::/129|bad prefix length in '2001:db8::/129' (want 0..128)",
        "tern connect [2001:db8::1:80|no ']' in '[2001:db8::1:80'",
        "tern connect [2001:db8::1]80|want ':PORT' after ']' in '[2001:db8::1]80'",
        "tern connect 2001:zz::1|bad IPv6 address '2001:zz::1'"})
    void aBadIpv6RuleIsOneLineNamingTheFileAndLine(String line, String reason) {
        final Rules.RulesException e = assertThrows(Rules.RulesException.class,
            () -> Rules.parse(line, "rules.conf", TERN_ADDRESS));
        assertTrue(e.getMessage().startsWith("rules.conf:1: " + reason), e.getMessage());
    }
}
