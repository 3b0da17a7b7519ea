// Shell completion for mrctl, generated from its CLI11 command tree so it
// never falls behind the commands: `mrctl completion bash` prints a bash
// script (installed as share/bash-completion/completions/mrctl) that knows
// every subcommand, every option, which options take a value, and the words
// a few positionals and values complete to (job names, gen kinds).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace mr::tools {

// Words an option's value (or a positional) completes to. Options without
// an entry complete to file names.
using CompletionWords = std::map<const CLI::Option*, std::vector<std::string>>;

// The bash completion script for `app` (the root command named `program`):
// data tables walked from the tree, plus a fixed completion function that
// needs bash-completion's _init_completion and _filedir. Hidden subcommands
// and options (empty group) are left out. Called by the completion command.
std::string BashCompletionScript(const CLI::App& app, const std::string& program,
                                 const CompletionWords& words);

// Adds the hidden `completion bash` command to `app`: it stores in *action a
// call that prints BashCompletionScript(app, ...). Called by mrctl's main
// after every other command was added, with `words` kept alive until then.
void AddCompletionCommand(CLI::App& app, const std::string& program,
                          const CompletionWords& words, std::function<int()>* action);

}  // namespace mr::tools
