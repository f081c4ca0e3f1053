package dev.tern.cli;

import dev.tern.script.ScriptException;
import dev.tern.script.ScriptIpVersion;
import dev.tern.script.ScriptProfile;
import dev.tern.script.ScriptRunner;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code tern script [--profile NAME] [--verbose] FILE.pkt...}: runs packetdrill-format scripts against one Tern
 * stack each, on virtual time ({@link ScriptRunner}; docs/SCRIPTS.md). Prints {@code pass FILE} for each script that
 * passes; a failing script prints one line on stderr, {@code tern: script: FILE:LINE: what was expected and what Tern
 * did}. Every file runs; the status is 0 when all passed, 1 when any failed or could not be read, 2 for a bad
 * command line.
 */
final class ScriptCommand {
    static final String USAGE = "script [--profile NAME] [--define NAME[=VALUE]]... [--ip-version V] [--verbose] FILE.pkt...";
    static final CommandHelp HELP = new CommandHelp("script",
        "[--profile NAME] [--define NAME[=VALUE]]... [--ip-version V] [--verbose] FILE.pkt...",
        "run packetdrill-format scripts against Tern on virtual time",
        "Runs each script against a fresh Tern stack on virtual time: the script plays the remote host (< injects a "
            + "TCP segment, UDP datagram or ICMP error, > expects one from Tern) and the application (socket calls). "
            + "A script passes when every line happens as written; the first line that does not fails it, with the "
            + "file, the line, what was expected and what Tern did. docs/SCRIPTS.md gives the syntax, the profiles and what is not supported.",
        List.of(
            CommandHelp.option("--profile NAME", "what the scripts assume of the stack: "
                + ScriptProfile.all().stream().map(ScriptProfile::name).collect(Collectors.joining(" or ")), "linux"),
            CommandHelp.option("--define NAME[=VALUE], -D NAME[=VALUE]", "define a symbol for #ifdef and, with a "
                + "value, for the scripts' words, as packetdrill's --define; may be repeated", "none"),
            CommandHelp.option("--ip-version V", "ipv4, ipv6 (TCP, UDP and ICMPv6 over IPv6, Tern 2001:db8::2, the remote ::1) or "
                + "ipv4-mapped-ipv6, as packetdrill's --ip_version; a script's own --ip_version line wins", "ipv4"),
            CommandHelp.option("--verbose", "print each packet Tern sends, with its time, as the script runs",
                "off")),
        false, List.of("./tern script conformance/scripts/*.pkt",
            "./tern script --profile bare --verbose my-test.pkt"));

    private final PrintStream out;
    private final PrintStream err;

    ScriptCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    int run(String[] argv) {
        // -D is packetdrill's short --define; read as one flag, so that the last definition of a name counts.
        final String[] normalized = argv.clone();
        for (int i = 0; i < normalized.length && !normalized[i].equals("--"); i++) {
            normalized[i] = normalized[i].equals("-D") ? "--define" : normalized[i];
        }
        final Arguments args = Arguments.parse("script", normalized, Set.of("--profile", "--define", "--ip-version"),
            Set.of("--verbose"));
        final String versionName = args.value("--ip-version", "ipv4");
        final ScriptIpVersion ipVersion = ScriptIpVersion.named(versionName);
        if (ipVersion == null) {
            throw new UsageException("script: --ip-version takes ipv4, ipv6 or ipv4-mapped-ipv6, got '" + versionName
                + "'");
        }
        final List<String> files = args.operands(1, Integer.MAX_VALUE, USAGE);
        final String name = args.value("--profile", "linux");
        final ScriptProfile named = ScriptProfile.named(name).orElseThrow(() -> new UsageException(
            "script: unknown profile '" + name + "' (" + ScriptProfile.all().stream().map(ScriptProfile::name)
                .collect(Collectors.joining(", ")) + ")"));
        final ScriptProfile profile;
        try {
            profile = named.withDefinitions(args.values("--define"));
        } catch (IllegalArgumentException e) {
            throw new UsageException("script: " + e.getMessage());
        }
        final boolean verbose = args.has("--verbose");
        int failed = 0;
        for (String file : files) {
            final String text;
            try {
                text = Files.readString(Path.of(file), StandardCharsets.UTF_8);
            } catch (IOException e) {
                err.println("tern: script: " + Tern.describe(new UncheckedIOException(e)));
                failed++;
                continue;
            }
            try {
                ScriptRunner.run(file, text, profile, verbose ? out : null, ipVersion);
                out.println("pass " + file);
            } catch (ScriptException e) {
                out.flush();
                err.println("tern: script: " + e.getMessage());
                failed++;
            }
        }
        out.flush();
        return failed == 0 ? 0 : 1;
    }
}
