package dev.tern.afxdp;

import dev.tern.afxdp.sys.XdpAbi;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The steering program as assembled (the kernel's verifier checks it for real in the namespace tests): every jump
 * lands inside the program, the map descriptor is a two-slot pseudo load, and the constants are the wire bytes of
 * Tern's MAC and address as the program reads them (little-endian loads).
 */
class XdpSteeringProgramTest {
    private static final long MAC = 0x02_11_22_33_44_55L;
    private static final int ADDRESS = 0xC612_0002;     // 198.18.0.2
    private static final XdpSteering.Maps MAPS = new XdpSteering.Maps(7, 9, 11, 13);

    private static int code(long insn) {
        return (int) (insn & 0xFF);
    }

    private static int offset(long insn) {
        return (short) (insn >>> 16);
    }

    private static int immediate(long insn) {
        return (int) (insn >>> 32);
    }

    @Test
    void everyJumpLandsInsideTheProgramAndItEndsInExit() {
        final long[] program = XdpSteering.program(MAPS, MAC, ADDRESS);
        for (int pc = 0; pc < program.length; pc++) {
            final int cls = code(program[pc]) & 0x07;
            final boolean jump = (cls == 0x05 || cls == 0x06) && code(program[pc]) != 0x85 && code(program[pc]) != 0x95;
            if (jump) {
                final int target = pc + 1 + offset(program[pc]);
                assertTrue(target > pc && target < program.length, "jump at " + pc + " to " + target);
            }
        }
        assertEquals(0x95, code(program[program.length - 1]));
    }

    @Test
    void theMapIsLoadedByDescriptorAndTheRedirectFallsBackToPass() {
        final long[] program = XdpSteering.program(MAPS, MAC, ADDRESS);
        int load = -1;
        for (int pc = 0; pc < program.length; pc++) {
            if (code(program[pc]) == 0x18 && immediate(program[pc]) == 7) {
                load = pc;
            }
        }
        assertTrue(load > 0);
        assertEquals(XdpAbi.BPF_PSEUDO_MAP_FD, (int) (program[load] >>> 12) & 0xF, "src register names a map descriptor");
        assertEquals(7, immediate(program[load]));
        assertEquals(0, program[load + 1], "the second slot of the 64-bit load");
        assertEquals(XdpAbi.XDP_PASS, immediate(program[load + 2]), "r3 = XDP_PASS: no socket on the queue goes to the kernel");
        assertEquals(XdpAbi.BPF_FUNC_REDIRECT_MAP, immediate(program[load + 3]));
    }

    @Test
    void theComparedConstantsAreTheWireBytesReadLittleEndian() {
        final long[] program = XdpSteering.program(MAPS, MAC, ADDRESS);
        final java.util.List<Integer> compared = new java.util.ArrayList<>();
        for (long insn : program) {
            if (code(insn) == 0x56) {
                compared.add(immediate(insn));
            }
        }
        assertTrue(compared.contains(0x33_22_11_02), "bytes 02:11:22:33 of the MAC: " + compared);
        assertTrue(compared.contains(0x55_44), "bytes 44:55 of the MAC");
        assertTrue(compared.contains(0x0200_12C6), "198.18.0.2 as read from the frame");
        assertTrue(compared.contains(0x0008) && compared.contains(0x0608), "ethertypes IPv4 and ARP");
    }

    @Test
    void groupsAreLookedUpInTheirMapByMacBytes2To5ButNeverAllSystems() {
        final long[] program = XdpSteering.program(MAPS, MAC, ADDRESS);
        int lookup = -1;
        for (int pc = 0; pc < program.length; pc++) {
            if (code(program[pc]) == 0x18 && immediate(program[pc]) == 9) {
                lookup = pc;
            }
        }
        assertTrue(lookup > 0, "the group map is loaded");
        assertEquals(XdpAbi.BPF_FUNC_MAP_LOOKUP_ELEM, immediate(program[lookup + 2]));
        assertEquals(0x0100_005E, XdpSteering.groupKey(0x01_00_5E_00_00_01L), "bytes 5e:00:00:01 read little-endian");
        assertEquals(0x0302_015E, XdpSteering.groupKey(0x01_00_5E_01_02_03L));
        boolean skipsAllSystems = false;
        for (long insn : program) {
            skipsAllSystems |= code(insn) == 0x16 && immediate(insn) == 0x0100_005E;
        }
        assertTrue(skipsAllSystems, "224.0.0.1's MAC always goes to the kernel");
    }

    @Test
    void anUndefinedLabelIsAnError() {
        final XdpSteering.Assembler a = new XdpSteering.Assembler();
        a.ja("nowhere");
        assertThrows(IllegalStateException.class, a::assemble);
    }
}
