#!/usr/bin/env bash
# Every command the documentation shows still parses: for each `mrctl`,
# `mr-master`, `mr-worker`, `mr-sim` and `mr-workload` command in a fenced
# code block of README.md and docs/*.md, the words after the binary must
# name existing subcommands (read off the binaries' own --help), every
# option must be one that command (or a parent) has, and
# `<binary> <subcommand path> --help` must succeed. So a documented verb or
# flag that no longer exists fails the suite.
#
# Tolerated: placeholders (FILE, ID, <n>, $VAR, KIND…) where a positional
# goes, `[...]` around optional parts of a synopsis, `...`, comments,
# pipes, redirections and `\` continuations. A placeholder where a
# subcommand goes ends the check of that command there.
#
# Usage: docs_commands_test.sh BUILD_DIR [DOC.md...]   (default docs: the
# source tree's README.md and docs/*.md). Prints one FAIL line per problem
# and PASS at the end; exit 1 on any failure.
set -u
build=$1
shift
src=$(cd "$(dirname "$0")/../.." && pwd)
if (($# == 0)); then set -- "$src/README.md" "$src"/docs/*.md; fi
exec perl - "$build" "$@" <<'PERL'
use strict;
use warnings;

my ($build, @docs) = @ARGV;
my %bin = (
  'mrctl' => "$build/tools/mrctl",
  'mr-master' => "$build/master/mr-master",
  'mr-worker' => "$build/worker/mr-worker",
  'mr-sim' => "$build/sim/mr-sim",
  'mr-workload' => "$build/sim/mr-workload",
);
for my $b (keys %bin) { die "FAIL: $bin{$b} is not built\n" unless -x $bin{$b}; }

# --help of a command path: { ok, subs => {name=>1}, opts => {name => takes_value} }.
my %help;
sub help_of {
  my ($name, @path) = @_;
  my $key = join(' ', $name, @path);
  return $help{$key} if exists $help{$key};
  my @cmd = ($bin{$name}, @path, '--help');
  my $out = '';
  if (open(my $fh, '-|', @cmd)) { local $/; $out = <$fh> // ''; close($fh); }
  my %h = (ok => ($? == 0), subs => {}, opts => {});
  my $section = '';
  for my $line (split /\n/, $out) {
    if ($line =~ /^(\w[\w ]*):\s*$/) { $section = $1; next; }
    if ($section eq 'Subcommands' && $line =~ /^  (\S+)/) { $h{subs}{$1} = 1; next; }
    if ($line =~ /^  (-[^ ]+)( [^ ])?/) {
      my $value = defined $2 ? 1 : 0;  # "  -r,--replication INT": one space, then its type
      $h{opts}{$_} = $value for split /,/, $1;
    }
  }
  return $help{$key} = \%h;
}

# Shell-ish words and operators of one line, honouring quotes.
sub tokens {
  my ($line) = @_;
  my @out;
  my $word;
  my $i = 0;
  my $n = length $line;
  while ($i < $n) {
    my $c = substr($line, $i, 1);
    if ($c =~ /\s/) { push @out, $word if defined $word; undef $word; $i++; next; }
    if ($c eq "'") {
      my $j = index($line, "'", $i + 1); $j = $n if $j < 0;
      $word .= substr($line, $i + 1, $j - $i - 1); $i = $j + 1; next;
    }
    if ($c eq '"') {
      my $j = $i + 1;
      $j++ while $j < $n && substr($line, $j, 1) ne '"';
      $word .= substr($line, $i + 1, $j - $i - 1); $i = $j + 1; next;
    }
    if ($c eq '\\') { $word .= substr($line, $i + 1, 1); $i += 2; next; }
    if ($c eq '#' && !defined $word) { last; }  # a comment
    if (substr($line, $i) =~ /^(\|\||&&|\$\(|[|;&()`<>])/) {
      push @out, $word if defined $word; undef $word;
      push @out, "\0$1"; $i += length $1; next;
    }
    $word .= $c; $i++;
  }
  push @out, $word if defined $word;
  return @out;
}

my $fails = 0;
my $checked = 0;
sub fail { my ($where, $msg) = @_; print "FAIL $where: $msg\n"; $fails++; }

sub placeholder { my ($w) = @_; return $w =~ /[\$<>{}*]/ || $w =~ /^[A-Z][A-Z0-9_:.…-]*$/ || $w =~ /\.\.\.|…/; }

# Checks one simple command (words after the binary).
sub check {
  my ($where, $name, @words) = @_;
  my @path;
  my %opts = %{ help_of($name)->{opts} };
  my $descend = 1;
  $checked++;
  while (@words) {
    my $w = shift @words;
    $w =~ s/[\[\]]//g;
    next if $w eq '' || $w =~ /^(\.\.\.|…)$/;
    if ($w =~ /^-/) {
      last if $w eq '--';
      my ($opt, $eq) = $w =~ /^([^=]+)(=.*)?$/;
      if (exists $opts{$opt}) {
        shift @words if $opts{$opt} && !defined $eq && @words;
        next;
      }
      if ($opt =~ /^-([A-Za-z]{2,})$/ && !grep { !exists $opts{"-$_"} } split //, $1) { next; }
      next if placeholder($opt);
      fail($where, "'" . join(' ', $name, @path) . "' has no option $opt");
      next;
    }
    my $h = help_of($name, @path);
    next unless $descend && %{ $h->{subs} };
    if (placeholder($w)) { $descend = 0; next; }
    if (!$h->{subs}{$w}) {
      fail($where, "no such command '" . join(' ', $name, @path, $w) . "' (" . join(', ', sort keys %{ $h->{subs} }) . ")");
      return;
    }
    push @path, $w;
    my $sub = help_of($name, @path);
    if (!$sub->{ok}) { fail($where, "'" . join(' ', $name, @path) . " --help' fails"); return; }
    %opts = (%opts, %{ $sub->{opts} });
  }
  fail($where, "'" . join(' ', $name, @path) . " --help' fails") unless help_of($name, @path)->{ok};
}

for my $doc (@docs) {
  open(my $fh, '<', $doc) or die "FAIL: cannot read $doc\n";
  my ($in, $lineno, $pending, $start) = (0, 0, '', 0);
  (my $short = $doc) =~ s{.*/(docs/)}{$1};
  $short =~ s{.*/}{} unless $short =~ m{^docs/};
  while (my $line = <$fh>) {
    $lineno++;
    chomp $line;
    if ($line =~ /^\s*(```|~~~)/) { $in = !$in; $pending = ''; next; }
    next unless $in;
    $line =~ s/^\s*\$ //;
    $start = $lineno if $pending eq '';
    if ($line =~ /\\$/) { $pending .= substr($line, 0, -1) . ' '; next; }
    $line = $pending . $line;
    $pending = '';
    my @t = tokens($line);
    my @cmd;
    for my $tok (@t, "\0;") {
      if ($tok =~ /^\0(.*)/) {
        my $op = $1;
        if (@cmd) {
          # The binary in command position: first, or after VAR=value
          # assignments and wrappers (sudo, env, time, ...). As an argument
          # (journalctl -u mr-master) it is not a command.
          for my $k (0 .. $#cmd) {
            (my $base = $cmd[$k]) =~ s{.*/}{};
            if (exists $bin{$base} && $cmd[$k] !~ /\$/) {
              check("$short:$start", $base, @cmd[$k + 1 .. $#cmd]);
              last;
            }
            last unless $cmd[$k] =~ /^\w+=/ || $cmd[$k] =~ /^(sudo|env|exec|time|nice|nohup)$/;
          }
        }
        @cmd = ();
        # A redirection's target is a file, not a command word.
        push @cmd, "\0skip" if $op eq '>' || $op eq '<';
        next;
      }
      if (@cmd && $cmd[-1] eq "\0skip") { pop @cmd; @cmd = (); next; }
      push @cmd, $tok;
    }
  }
  close $fh;
}
print(($fails == 0 ? "PASS" : "FAIL: $fails") . " ($checked commands checked)\n");
exit($fails == 0 ? 0 : 1);
PERL
