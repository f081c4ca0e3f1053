package dev.tern.tcp;

import dev.tern.core.hash.SipHash;
import dev.tern.core.net.Ipv4Address;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fast Open cookies are Linux's: the vectors are the cookies Linux gives in packetdrill's Fast Open suite (the
 * SYN-ACKs of its scripts, written against the kernel), for the key and addresses each script sets.
 */
class FastOpenKeysTest {
    private static int address(String dotted) {
        return Ipv4Address.parse(dotted);
    }

    @Test
    void theKeyOfTheSysctlGivesLinuxsCookie() {
        // server/simple1.pkt: key a0bf63f7-ed803d81-cd641d30-cebc4a90, client 10.248.0.2, server 192.168.0.2.
        final FastOpenKeys keys = FastOpenKeys.parse("a0bf63f7-ed803d81-cd641d30-cebc4a90");
        assertEquals(0x00abaaabe8e954c2L, keys.cookie(address("10.248.0.2"), address("192.168.0.2")));
    }

    @Test
    void theSocketOptionsBytesAreTheSameKey() {
        // server/sockopt-fastopen-key.pkt sets the key above as TCP_FASTOPEN_KEY's 16 bytes, each word little-endian.
        final byte[] bytes = {(byte) 0xf7, 0x63, (byte) 0xbf, (byte) 0xa0, (byte) 0x81, 0x3d, (byte) 0x80, (byte) 0xed,
            0x30, 0x1d, 0x64, (byte) 0xcd, (byte) 0x90, 0x4a, (byte) 0xbc, (byte) 0xce};
        assertEquals(FastOpenKeys.parse("a0bf63f7-ed803d81-cd641d30-cebc4a90"), FastOpenKeys.ofBytes(bytes));
        assertEquals(0x00abaaabe8e954c2L, FastOpenKeys.ofBytes(bytes).cookie(address("10.248.0.2"),
            address("192.168.0.2")));
    }

    @Test
    void otherKeysAndAddressesGiveTheirLinuxCookies() {
        // The same script's listener under the all-zero key; opt34/basic-rw.pkt under defaults.sh's key.
        assertEquals(0x93b7aa4f550f8a1aL, FastOpenKeys.parse("00000000-00000000-00000000-00000000")
            .cookie(address("10.248.0.2"), address("192.168.0.2")));
        assertEquals(0x3021b9d889017eebL, FastOpenKeys.parse("a1a1a1a1-b2b2b2b2-c3c3c3c3-d4d4d4d4")
            .cookie(address("192.0.2.1"), address("192.168.0.1")));
    }

    @Test
    void theEightByteSipHashMatchesTheReferenceVector() {
        // The reference implementation's vector for the 8-byte message 00..07 under key 00..0f.
        assertEquals(0x93f5f5799a932462L, SipHash.hash(0x0706050403020100L, 0x0f0e0d0c0b0a0908L,
            0x0706050403020100L));
    }

    @Test
    void theBackupKeysCookieIsStillAccepted() {
        final FastOpenKeys old = FastOpenKeys.parse("1-2-3-4");
        final FastOpenKeys rotated = FastOpenKeys.parse("5-6-7-8,1-2-3-4");
        final int client = address("198.18.0.1");
        final int server = address("198.18.0.2");
        assertEquals(1, rotated.check(rotated.cookie(client, server), client, server));
        assertEquals(2, rotated.check(old.cookie(client, server), client, server));
        assertEquals(0, FastOpenKeys.parse("5-6-7-8").check(old.cookie(client, server), client, server));
        assertEquals(0, rotated.check(rotated.cookie(client, server), server, client), "another client's cookie");
        assertTrue(rotated.backup());
        assertFalse(old.backup());
    }

    @Test
    void badKeysAreRefusedWithTheReason() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> FastOpenKeys.parse("1-2-3"))
            .getMessage().contains("four hexadecimal words"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> FastOpenKeys.parse("1-2-3-xyz"))
            .getMessage().contains("'xyz'"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> FastOpenKeys.ofBytes(new byte[3]))
            .getMessage().contains("got 3"));
        assertFalse(FastOpenKeys.parse("1-2-3-4").toString().contains("1"), "a key is never printed");
    }
}
