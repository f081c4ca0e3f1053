package dev.tern.conformance.fuzz;

import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.tern.script.ScriptException;
import dev.tern.script.ScriptProfile;
import dev.tern.script.ScriptRunner;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * A fuzz harness for the packetdrill-format runner, parser and run both: the fuzzer's bytes as a script's text, run
 * under the corpus profile on virtual time. A script either passes or is refused or failed with a
 * {@link ScriptException} whose message begins {@code FILE:LINE: } (docs/SCRIPTS.md's contract for bad input); any
 * other exception, a stack trace where the user should have had one line, is a finding.
 *
 * <p>Seeds: a few of our own scripts in {@code ScriptFuzzTestInputs/scriptText/}. In CI each runs once; to fuzz:
 * {@code JAZZER_FUZZ=1 mvn ... -Dtest='dev.tern.conformance.fuzz.ScriptFuzzTest#scriptText'}.
 */
class ScriptFuzzTest {
    private static final String FILE = "fuzzed.pkt";
    private static final Pattern WHERE = Pattern.compile(Pattern.quote(FILE) + ":\\d+: .+", Pattern.DOTALL);

    @FuzzTest(maxDuration = "10m")
    void scriptText(byte[] data) {
        final String text = new String(data, StandardCharsets.UTF_8);
        try {
            ScriptRunner.run(FILE, text, ScriptProfile.corpus());
        } catch (ScriptException e) {
            if (!WHERE.matcher(e.getMessage()).matches()) {
                throw new AssertionError("a script error without FILE:LINE: " + e.getMessage(), e);
            }
        }
    }
}
