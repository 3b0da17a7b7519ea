// `mrctl cert init|issue`: the cluster CA and the certificates of nodes and
// clients (docs/tls.md). Called from mrctl's main to register the commands.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tools/cert_authority.h"
#include "tools/mrctl_common.h"

namespace mr::tools {

void AddCertCommands(CLI::App& app, std::function<int()>* action) {
  struct Options {
    std::string dir;
    std::string out;
    std::string cluster_name = "mr";
    std::string name;
    std::vector<std::string> hosts;
    int days = 0;
    bool force = false;
  };
  auto o = std::make_shared<Options>();
  auto* cert = app.add_subcommand("cert", "the cluster CA and TLS certificates (docs/tls.md)")
                   ->require_subcommand(1);
  auto* init = cert->add_subcommand("init", "make the cluster CA: DIR/ca.key (0600) and DIR/ca.crt");
  init->add_option("--dir", o->dir, "the CA's directory")->required();
  init->add_option("--cluster-name", o->cluster_name, "CA subject: NAME cluster CA")->capture_default_str();
  init->add_option("--days", o->days, "validity in days (default: 3650)");
  init->callback([o, action] {
    *action = [o] {
      Status s = InitCertificateAuthority(o->dir, o->cluster_name, o->days == 0 ? 3650 : o->days);
      if (!s.ok()) return Fail(s, s.IsInvalidArgument() ? 2 : 1);
      std::printf("CA: %s/ca.crt (key %s/ca.key, mode 0600)\n", o->dir.c_str(), o->dir.c_str());
      return 0;
    };
  });
  auto* issue = cert->add_subcommand(
      "issue", "make NAME.key (0600) and NAME.crt signed by the CA; NAME is a worker id, master, or a client's name");
  issue->add_option("NAME", o->name, "the name the certificate is for")->required();
  issue->add_option("--dir", o->dir, "the CA's directory")->required();
  issue->add_option("--out", o->out, "where to write NAME.key and NAME.crt (default: --dir)");
  issue->add_option("--address", o->hosts,
                    "an IP address or host name the holder is reached at (repeatable; a server's "
                    "certificate must name the host clients dial)");
  issue->add_option("--days", o->days,
                    "validity in days (default: 825; 0 or less: already expired, for tests)");
  issue->add_flag("--force", o->force, "replace NAME.key and NAME.crt");
  issue->callback([o, action, issue] {
    *action = [o, issue] {
      CertificateRequest r;
      r.name = o->name;
      r.hosts = o->hosts;
      r.days = issue->count("--days") ? o->days : 825;
      r.force = o->force;
      const std::string out = o->out.empty() ? o->dir : o->out;
      Status s = IssueCertificate(o->dir, out, r);
      if (!s.ok()) return Fail(s, s.IsInvalidArgument() ? 2 : 1);
      std::printf("%s/%s.crt (key %s/%s.key, mode 0600)\n", out.c_str(), o->name.c_str(),
                  out.c_str(), o->name.c_str());
      return 0;
    };
  });
}

}  // namespace mr::tools
