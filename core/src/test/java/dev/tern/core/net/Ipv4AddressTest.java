package dev.tern.core.net;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.integers;

class Ipv4AddressTest {
    @Test
    void parsesAndFormats() {
        assertEquals(0xC612_0002, Ipv4Address.parse("198.18.0.2"));
        assertEquals("198.18.0.2", Ipv4Address.format(0xC612_0002));
        assertEquals("255.255.255.255", Ipv4Address.format(-1));
    }

    @Test
    void formatThenParseIsIdentity() {
        qt().forAll(integers().all()).check(address -> Ipv4Address.parse(Ipv4Address.format(address)) == address);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "a.b.c.d", "1..2.3", "1.2.3.4 x", "0001.2.3.4"})
    void rejectsBadText(String text) {
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class, () -> Ipv4Address.parse(text));
        assertTrue(error.getMessage().contains("'" + text + "'"), error.getMessage());
    }

    @Test
    void classifies() {
        assertTrue(Ipv4Address.isMulticast(Ipv4Address.parse("239.1.2.3")));
        assertFalse(Ipv4Address.isMulticast(Ipv4Address.parse("198.18.0.1")));
        assertTrue(Ipv4Address.isLinkLocalMulticast(Ipv4Address.parse("224.0.0.22")));
        assertFalse(Ipv4Address.isLinkLocalMulticast(Ipv4Address.parse("224.0.1.1")));
        assertTrue(Ipv4Address.isLoopback(Ipv4Address.parse("127.0.0.1")));
        assertTrue(Ipv4Address.isReserved(Ipv4Address.parse("240.0.0.1")));
        assertFalse(Ipv4Address.isReserved(Ipv4Address.LIMITED_BROADCAST));
    }

    @Test
    void interfaceAddressKnowsItsSubnet() {
        final InterfaceAddress address = InterfaceAddress.parse("198.18.0.2/24");
        assertEquals(0xC612_0000, address.network());
        assertEquals(0xC612_00FF, address.broadcast());
        assertTrue(address.contains(Ipv4Address.parse("198.18.0.200")));
        assertFalse(address.contains(Ipv4Address.parse("198.18.1.1")));
        assertEquals(Ipv4Address.LIMITED_BROADCAST, InterfaceAddress.parse("198.18.0.2/31").broadcast());
        assertEquals(32, InterfaceAddress.parse("198.18.0.2").prefixLength());
        assertThrows(IllegalArgumentException.class, () -> InterfaceAddress.parse("198.18.0.2/33"));
        assertThrows(IllegalArgumentException.class, () -> InterfaceAddress.parse("198.18.0.2/"));
    }
}
