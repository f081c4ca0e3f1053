package dev.tern.testkit.netns;

import java.util.List;

/** A finished external command: what ran, its exit status and its output. */
public record CommandResult(List<String> command, int exitCode, String stdout, String stderr) {
    /** Returns this result, or throws {@link NetnsException} quoting the command and its output when it failed. */
    public CommandResult orThrow() {
        if (exitCode != 0) {
            throw new NetnsException("`" + String.join(" ", command) + "` exited " + exitCode + ": "
                + (stderr.strip() + " " + stdout.strip()).strip());
        }
        return this;
    }

    public boolean succeeded() {
        return exitCode == 0;
    }
}
