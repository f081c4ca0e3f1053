package dev.tern.conformance.interop;

import dev.tern.afpacket.netns.BackgroundCommand;
import dev.tern.afpacket.netns.CommandResult;
import dev.tern.afpacket.netns.NetnsHarness;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The {@code tern} command as a user runs it, in its own JVM inside the Tern namespace, against the kernel: the
 * same checks as the hand-run smoke test ({@code ip netns exec NS ./tern ping -s 8000 --link afpacket:IFACE ...}
 * and the kernel's {@code ping -s 8000} of {@code tern serve}).
 */
class TernCommandInteropTest {
    private static final Pattern REPLY = Pattern.compile("^8008 bytes from 198\\.18\\.0\\.1: icmp_seq=(\\d+) ttl=64 time=", Pattern.MULTILINE);

    private VethRig rig;

    @AfterEach
    void closeRig() {
        if (rig != null) {
            rig.close();
        }
    }

    /** {@code java ... dev.tern.cli.Tern ARGS}, with this JVM's class path and the flags the launcher passes. */
    private static List<String> tern(Path countersDirectory, String... arguments) {
        final List<String> command = new ArrayList<>(List.of("env", "TERN_COUNTERS_DIR=" + countersDirectory,
            ProcessHandle.current().info().command().orElse("java"), "--enable-native-access=ALL-UNNAMED",
            "--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "--sun-misc-unsafe-memory-access=allow",
            "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"), "dev.tern.cli.Tern"));
        command.addAll(List.of(arguments));
        return command;
    }

    @Test
    void ternPingOverAfPacketGetsTheKernelsRepliesToFragmentedEchoes(@TempDir Path counters) {
        rig = VethRig.create(VethSetup.DEFAULT);

        final CommandResult ping = rig.net().ternExec(Duration.ofSeconds(60), tern(counters, "ping", "-c", "3", "-s", "8000",
            "-i", "0.05", "-W", "3", "--link", "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR,
            NetnsHarness.PEER_ADDRESS).toArray(String[]::new));

        final String output = ping.stdout() + ping.stderr();
        assertEquals(0, ping.exitCode(), output);
        assertTrue(output.contains("3 packets transmitted, 3 received, 0% packet loss"), output);
        final Matcher replies = REPLY.matcher(ping.stdout());
        final List<Integer> sequences = new ArrayList<>();
        while (replies.find()) {
            sequences.add(Integer.parseInt(replies.group(1)));
        }
        assertEquals(List.of(1, 2, 3), sequences, output);
        assertTrue(!output.contains("wrong data") && !output.contains("DUP"), output);
    }

    @Test
    void kernelsFragmentedPingsOfTernServeComeBack(@TempDir Path counters) {
        rig = VethRig.create(VethSetup.DEFAULT);
        final BackgroundCommand serve = rig.net().startInTern(tern(counters, "serve", "--link",
            "afpacket:" + NetnsHarness.TERN_INTERFACE, "--ip", VethRig.TERN_CIDR).toArray(String[]::new));
        serve.awaitOutput("answering ARP and ping", Duration.ofSeconds(30));

        final KernelPeer.PingOutcome ping = rig.kernel().ping(3, 8000, 0.05);

        assertEquals(3, ping.received(), ping.output());
        assertTrue(ping.clean(), ping.output());
        assertEquals(List.of(1, 2, 3), ping.replySequences());
        final int status = serve.stop();
        assertTrue(status == 0 || status == 128 + 15, "serve ends on SIGTERM (by its shutdown hook): " + status);
        assertTrue(!serve.stderr().contains("Exception"), serve.stderr());
    }
}
