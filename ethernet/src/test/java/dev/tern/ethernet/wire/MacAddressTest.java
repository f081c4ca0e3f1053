package dev.tern.ethernet.wire;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.longs;

class MacAddressTest {
    @Test
    void parsesAndFormatsColonAndDashForms() {
        assertEquals(0x0200_0000_0001L, MacAddress.parse("02:00:00:00:00:01"));
        assertEquals(0xAABB_CCDD_EEFFL, MacAddress.parse("aa-bb-cc-dd-ee-ff"));
        assertEquals(0x0A0B_0C0D_0E0FL, MacAddress.parse("A:B:C:D:E:F"));
        assertEquals("aa:bb:cc:dd:ee:ff", MacAddress.format(0xAABB_CCDD_EEFFL));
        assertEquals("00:00:00:00:00:00", MacAddress.format(0));
    }

    @Test
    void formatThenParseIsIdentityFor48BitValues() {
        qt().forAll(longs().between(0, 0xFFFF_FFFF_FFFFL))
            .check(mac -> MacAddress.parse(MacAddress.format(mac)) == mac);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "02:00:00:00:00", "02:00:00:00:00:01:02", "02:00:00:00:00:zz", "020:00:00:00:00:01",
        "02::00:00:00:01", "hello"})
    void rejectsMalformedTextWithTheTextInTheMessage(String text) {
        final IllegalArgumentException error = assertThrows(IllegalArgumentException.class, () -> MacAddress.parse(text));
        assertTrue(error.getMessage().contains("'" + text + "'"), error.getMessage());
    }

    @Test
    void classifiesBroadcastMulticastUnicast() {
        assertTrue(MacAddress.isBroadcast(MacAddress.BROADCAST));
        assertTrue(MacAddress.isMulticast(MacAddress.BROADCAST));
        assertTrue(MacAddress.isMulticast(MacAddress.parse("01:00:5e:00:00:01")));
        assertTrue(MacAddress.isMulticast(MacAddress.parse("33:33:00:00:00:01")));
        assertFalse(MacAddress.isMulticast(MacAddress.parse("02:00:00:00:00:01")));
        assertTrue(MacAddress.isUnicast(MacAddress.parse("02:00:00:00:00:01")));
        assertFalse(MacAddress.isUnicast(MacAddress.ZERO));
        assertTrue(MacAddress.isLocallyAdministered(MacAddress.parse("02:00:00:00:00:01")));
        assertFalse(MacAddress.isLocallyAdministered(MacAddress.parse("00:1b:21:00:00:01")));
    }

    @Test
    void mapsIpv4GroupsToTheLow23Bits() {
        // RFC 1112 §6.4: 224.0.0.251 -> 01:00:5e:00:00:fb; 239.255.255.250 -> 01:00:5e:7f:ff:fa (bit 24 dropped)
        assertEquals(MacAddress.parse("01:00:5e:00:00:fb"), MacAddress.ofIpv4Multicast(0xE00000FB));
        assertEquals(MacAddress.parse("01:00:5e:7f:ff:fa"), MacAddress.ofIpv4Multicast(0xEFFFFFFA));
        assertEquals(MacAddress.ofIpv4Multicast(0xE0000001), MacAddress.ofIpv4Multicast(0xE0800001));
    }
}
