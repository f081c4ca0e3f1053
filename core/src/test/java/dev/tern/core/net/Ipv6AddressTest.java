package dev.tern.core.net;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.longs;

class Ipv6AddressTest {
    /** RFC 5952 §4: the recommended text of each address, from other ways of writing it. */
    @ParameterizedTest
    @CsvSource({
        "2001:0db8:0000:0000:0000:0000:0000:0001, 2001:db8::1",
        "2001:db8:0:0:1:0:0:1, 2001:db8::1:0:0:1",          // §4.2.3: the first of two equal runs
        "2001:db8:0:1:1:1:1:1, 2001:db8:0:1:1:1:1:1",       // §4.2.2: one zero group stays
        "2001:db8:0:0:0:1:0:0, 2001:db8::1:0:0",            // §4.2.1: the longest run
        "2001:DB8::ABCD, 2001:db8::abcd",                   // §4.3: lower case
        "::, ::",
        "::1, ::1",
        "1::, 1::",
        "fe80:0:0:0:0200:5eff:fe00:5301, fe80::200:5eff:fe00:5301",
        "ff02::1:ff00:2, ff02::1:ff00:2",
    })
    void writesTheRecommendedText(String written, String recommended) {
        assertEquals(recommended, Ipv6Address.parse(written).toString());
    }

    @Test
    void formatThenParseIsIdentityAndAgreesWithTheJdk() throws Exception {
        qt().withExamples(2000).forAll(longs().all(), longs().all(), integers().between(0, 7)).checkAssert((h, l, zeros) -> {
            // Runs of zero groups, so that compression is exercised, not only random words.
            final long high = zeros < 4 ? h & ~(0xffffL << (16 * zeros)) & ~(0xffffL << (16 * Math.max(0, zeros - 1))) : h;
            final long low = zeros >= 4 ? 0 : l;
            final Ipv6Address address = new Ipv6Address(high, low);
            final String text = address.toString();
            assertEquals(address, Ipv6Address.parse(text), text);
            final byte[] expected = new byte[16];
            for (int i = 0; i < 8; i++) {
                expected[i] = (byte) (high >>> (56 - 8 * i));
                expected[8 + i] = (byte) (low >>> (56 - 8 * i));
            }
            try {
                final byte[] jdk = InetAddress.getByName(text).getAddress();
                if (jdk.length == 16) {
                    assertArrayEquals(expected, jdk, text);
                }
            } catch (java.net.UnknownHostException e) {
                throw new AssertionError(text, e);
            }
        });
    }

    @Test
    void ipv4MappedTextIsKept() {
        final Ipv6Address mapped = Ipv6Address.parse("::ffff:198.18.0.2");
        assertTrue(Ipv6Address.isIpv4Mapped(mapped.high(), mapped.low()));
        assertEquals(0xffff_c612_0002L, mapped.low());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "198.18.0.2", "2001:db8::1::2", "2001:db8:::1", "12345::1", "fe80::1%eth0", "g::1",
        "1:2:3:4:5:6:7:8:9"})
    void rejectsBadText(String text) {
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class, () -> Ipv6Address.parse(text));
        assertTrue(error.getMessage().contains("IPv6 address"), error.getMessage());
    }

    /** RFC 4291 Appendix A: 02:00:5e:00:53:01 gives the identifier 0000:5eff:fe00:5301 (U/L bit inverted). */
    @Test
    void linkLocalFromTheMacByModifiedEui64() {
        assertEquals("fe80::5eff:fe00:5301", Ipv6Address.linkLocal(0x0200_5e00_5301L).toString());
        assertEquals("fe80::ff:fe00:1", Ipv6Address.linkLocal(0x0200_0000_0001L).toString());
        assertEquals("fe80::a8bb:ccff:fedd:eeff", Ipv6Address.linkLocal(0xaabb_ccdd_eeffL).toString());
    }

    /** RFC 4291 §2.7.1: ff02::1:ff and the address's last 24 bits; RFC 2464 §7: 33:33 and the group's last 32 bits. */
    @Test
    void solicitedNodeGroupAndItsMac() {
        final Ipv6Address group = Ipv6Address.parse("2001:db8::4:0abc:1234").solicitedNode();
        assertEquals("ff02::1:ffbc:1234", group.toString());
        assertEquals(0x3333_ffbc_1234L, Ipv6Address.multicastMac(group.low()));
        assertEquals(0x3333_0000_0001L, Ipv6Address.multicastMac(Ipv6Address.ALL_NODES.low()));
    }

    @Test
    void prefixes() {
        final Ipv6InterfaceAddress a = Ipv6InterfaceAddress.parse("2001:db8:0:1::2/64");
        final Ipv6Address on = Ipv6Address.parse("2001:db8:0:1:ffff::9");
        final Ipv6Address off = Ipv6Address.parse("2001:db8:0:2::2");
        assertTrue(a.onLink(on.high(), on.low()));
        assertFalse(a.onLink(off.high(), off.low()));
        final Ipv6InterfaceAddress narrow = Ipv6InterfaceAddress.parse("2001:db8::2/127");
        final Ipv6Address three = Ipv6Address.parse("2001:db8::3");
        final Ipv6Address four = Ipv6Address.parse("2001:db8::4");
        assertTrue(narrow.onLink(three.high(), three.low()));
        assertFalse(narrow.onLink(four.high(), four.low()));
        assertEquals(64, Ipv6InterfaceAddress.parse("2001:db8::2").prefixLength());
        assertTrue(Ipv6InterfaceAddress.parse("2001:db8::2/1").onLink(off.high(), off.low()));
    }

    @ParameterizedTest
    @ValueSource(strings = {"2001:db8::2/0", "2001:db8::2/129", "2001:db8::2/", "ff02::1/64", "::/64", "2001:db8::2/x"})
    void rejectsBadInterfaceAddresses(String text) {
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class,
            () -> Ipv6InterfaceAddress.parse(text));
        assertTrue(error.getMessage().contains("IPv6"), error.getMessage());
    }

    /**
     * RFC 7217's identifier is a function of its inputs alone (stable across starts with one key), changes with each
     * of them, and is not the EUI-64 one (it says nothing of the MAC).
     */
    @Test
    void anOpaqueInterfaceIdentifierIsStableAndChangesWithEachInput() {
        final long mac = 0x02_11_22_33_44_55L;
        final byte[] key = "0123456789abcdef0123456789abcdef".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        final byte[] otherKey = "fedcba9876543210fedcba9876543210".getBytes(java.nio.charset.StandardCharsets.US_ASCII);
        final long identifier = Ipv6Address.opaqueInterfaceIdentifier(Ipv6Address.LINK_LOCAL_HIGH, mac, 0, key);
        assertEquals(identifier, Ipv6Address.opaqueInterfaceIdentifier(Ipv6Address.LINK_LOCAL_HIGH, mac, 0, key.clone()));
        final java.util.Set<Long> others = java.util.Set.of(
            Ipv6Address.opaqueInterfaceIdentifier(Ipv6Address.LINK_LOCAL_HIGH, mac, 0, otherKey),
            Ipv6Address.opaqueInterfaceIdentifier(Ipv6Address.LINK_LOCAL_HIGH, mac, 1, key),
            Ipv6Address.opaqueInterfaceIdentifier(Ipv6Address.LINK_LOCAL_HIGH, mac + 1, 0, key),
            Ipv6Address.opaqueInterfaceIdentifier(0x2001_0db8_0000_0000L, mac, 0, key),
            Ipv6Address.interfaceIdentifier(mac));
        assertEquals(5, others.size());
        org.junit.jupiter.api.Assertions.assertFalse(others.contains(identifier));
    }
}
