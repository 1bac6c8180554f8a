package catalogue

import (
	"slices"
	"strings"
	"testing"
)

func mustDefault(t *testing.T) *Catalogue {
	t.Helper()
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLookup(t *testing.T) {
	c := mustDefault(t)
	tests := []struct {
		cmd      string
		program  string
		path     string
		effects  []Effect // must all be present
		readOnly bool
		targets  []string // kind=word, must all be present
	}{
		{cmd: "terraform destroy -auto-approve", program: "terraform", path: "destroy", effects: []Effect{InfraDestroy}},
		{cmd: "terragrunt run-all destroy", program: "terragrunt", path: "run-all", effects: []Effect{InfraDestroy}},
		{cmd: "terragrunt destroy", program: "terragrunt", path: "destroy", effects: []Effect{InfraDestroy}},
		{cmd: "eksctl delete cluster --name prod", program: "eksctl", effects: []Effect{InfraDestroy}},
		{cmd: "helmfile destroy", program: "helmfile", path: "destroy", effects: []Effect{InfraDestroy}},
		{cmd: "gh api -X DELETE repos/o/r", program: "gh", path: "api", effects: []Effect{InfraDestroy}},
		{cmd: "gh api --method PATCH repos/o/r -f private=false", program: "gh", path: "api", effects: []Effect{InfraApply, Egress}},
		{cmd: "gcloud run services delete api", program: "gcloud", path: "run", effects: []Effect{InfraDestroy}},
		{cmd: "aws deploy delete-application --application-name x", program: "aws", path: "deploy", effects: []Effect{InfraDestroy}},
		{cmd: "git filter-repo --path x --invert-paths", program: "git", path: "filter-repo", effects: []Effect{HistoryRewrite, HistoryErase}},
		{cmd: "git worktree remove --force ../wt", program: "git", path: "worktree remove", effects: []Effect{Delete}, targets: []string{"path=../wt"}},
		{cmd: "dmesg --clear", program: "dmesg", effects: []Effect{HistoryErase}},
		{cmd: "docker builder prune -af", program: "docker", path: "builder prune", effects: []Effect{Delete}},
		{cmd: "terraform show", program: "terraform", path: "show", readOnly: true},
		{cmd: "gh pr list --state open", program: "gh", path: "pr list", readOnly: true},
		{cmd: "tofu apply -destroy", program: "terraform", path: "apply", effects: []Effect{InfraApply, InfraDestroy}},
		{cmd: "terraform plan -out plan.bin", program: "terraform", path: "plan", effects: []Effect{Write}, targets: []string{"path=plan.bin"}},
		{cmd: "kubectl delete ns staging", program: "kubectl", path: "delete", effects: []Effect{InfraDestroy}, targets: []string{"resource=ns", "resource=staging"}},
		{cmd: "kubectl -n prod delete pod web-1", program: "kubectl", path: "delete", effects: []Effect{InfraDestroy}, targets: []string{"resource=web-1"}},
		{cmd: "kubectl get pods -A", program: "kubectl", path: "get", readOnly: true},
		{cmd: "shred -u secrets.txt", program: "shred", effects: []Effect{Write, Delete, HistoryErase}, targets: []string{"path=secrets.txt"}},
		{cmd: "docker system prune -af", program: "docker", path: "system prune", effects: []Effect{Delete}},
		{cmd: "docker compose down -v", program: "docker", path: "compose down", effects: []Effect{Delete, ProcessControl}},
		{cmd: "docker-compose ps", program: "docker-compose", path: "ps", readOnly: true},
		{cmd: "kubectl rollout status deploy/web", program: "kubectl", path: "rollout status", readOnly: true},
		{cmd: "kubectl rollout undo deploy/web", program: "kubectl", path: "rollout undo", effects: []Effect{InfraApply}},
		{cmd: "tar xzf a.tgz", program: "tar", effects: []Effect{Write}, targets: []string{"path=a.tgz"}},
		{cmd: "tar czf out.tgz src", program: "tar", effects: []Effect{Write}, targets: []string{"path=out.tgz", "path=src"}},
		{cmd: "tar -tzf a.tgz", program: "tar", readOnly: true, targets: []string{"path=a.tgz"}},
		{cmd: "tar tvf a.tar", program: "tar", readOnly: true},
		{cmd: "tar -xf a.tar --to-command=sh", program: "tar", effects: []Effect{Write, ExecArg}},
		{cmd: "tar -tf backup:/dev/st0", program: "tar", effects: []Effect{Egress, ExecArg}, targets: []string{"remote=backup:/dev/st0"}},
		{cmd: "tar -tf a.tar --index-file=/etc/x", program: "tar", effects: []Effect{Write}, targets: []string{"path=/etc/x"}},
		{cmd: "xargs -i rm {}", program: "xargs", effects: []Effect{ExecArg}, targets: []string{"command=rm"}},
		{cmd: "ps aux", program: "ps", readOnly: true},
		{cmd: "docker ps -a", program: "docker", path: "ps", readOnly: true},
		{cmd: "git status", program: "git", path: "status", readOnly: true},
		{cmd: "git -C sub status --short", program: "git", path: "status", readOnly: true, targets: []string{"path=sub"}},
		{cmd: "git log --oneline -n 5", program: "git", path: "log", readOnly: true},
		{cmd: "git log --output=/etc/passwd", program: "git", path: "log", effects: []Effect{Write}, targets: []string{"path=/etc/passwd"}},
		{cmd: "git push --force origin main", program: "git", path: "push", effects: []Effect{HistoryRewrite, Publish, Egress}, targets: []string{"ref=origin", "ref=main"}},
		{cmd: "git push origin +main", program: "git", path: "push", effects: []Effect{HistoryRewrite}},
		{cmd: "git push origin :release", program: "git", path: "push", effects: []Effect{Delete}},
		{cmd: "git push -f", program: "git", path: "push", effects: []Effect{HistoryRewrite}},
		{cmd: "git push origin feature", program: "git", path: "push", effects: []Effect{Publish}},
		{cmd: "git -c core.sshCommand=evil fetch", program: "git", path: "fetch", effects: []Effect{ExecArg, Download}},
		{cmd: "git config --global user.name", program: "git", path: "config", readOnly: true},
		{cmd: "git config core.hooksPath /tmp/h", program: "git", path: "config", effects: []Effect{Write}},
		{cmd: "git config --unset core.pager", program: "git", path: "config", effects: []Effect{Write}},
		{cmd: "git remote -v", program: "git", path: "remote", readOnly: true},
		{cmd: "git reflog expire --all", program: "git", path: "reflog expire", effects: []Effect{HistoryErase}},
		{cmd: "git rebase -x 'make test' main", program: "git", path: "rebase", effects: []Effect{Shell, HistoryRewrite}, targets: []string{"shell=make test"}},
		{cmd: "sed -i s/a/b/ f.txt", program: "sed", effects: []Effect{Write}, targets: []string{"path=f.txt"}},
		{cmd: "sed -n 1,5p f.txt", program: "sed", targets: []string{"script=1,5p", "path=f.txt"}},
		{cmd: "find . -name '*.o' -delete", program: "find", effects: []Effect{Delete}},
		{cmd: "find . -type f -name x", program: "find", readOnly: true},
		{cmd: "find . -exec rm -rf {} ;", program: "find", effects: []Effect{ExecArg}, targets: []string{"command=rm"}},
		{cmd: "xargs -0 rm -f", program: "xargs", effects: []Effect{ExecArg}, targets: []string{"command=rm"}},
		{cmd: "cp -r src /etc/cron.d/x", program: "cp", effects: []Effect{Write}, targets: []string{"path=src", "path=/etc/cron.d/x"}},
		{cmd: "sort -o out.txt in.txt", program: "sort", effects: []Effect{Write}, targets: []string{"path=out.txt", "path=in.txt"}},
		{cmd: "sort -r in.txt", program: "sort", readOnly: true},
		{cmd: "ls -la /tmp", program: "ls", readOnly: true, targets: []string{"path=/tmp"}},
		{cmd: "/usr/bin/ls", program: "ls", readOnly: true},
		{cmd: "aws s3 rm s3://bucket/key --recursive", program: "aws", path: "s3 rm", effects: []Effect{InfraDestroy}},
		{cmd: "aws ec2 terminate-instances --instance-ids i-1", program: "aws", effects: []Effect{InfraDestroy}},
		{cmd: "aws ec2 describe-instances", program: "aws", readOnly: true},
		{cmd: "gcloud compute instances delete vm1", program: "gcloud", effects: []Effect{InfraDestroy}},
		{cmd: "az group list", program: "az", readOnly: true},
		{cmd: "gcloud container clusters get-credentials c1", program: "gcloud", effects: []Effect{Write}},
		{cmd: "aws s3api delete-bucket --bucket b", program: "aws", effects: []Effect{InfraDestroy}},
		{cmd: "gh pr list", program: "gh", path: "pr list", readOnly: true},
		{cmd: "gh repo delete me/x --yes", program: "gh", path: "repo delete", effects: []Effect{InfraDestroy}},
		{cmd: "helm uninstall web", program: "helm", path: "uninstall", effects: []Effect{InfraDestroy}},
		{cmd: "pulumi destroy -y", program: "pulumi", path: "destroy", effects: []Effect{InfraDestroy}},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := c.Lookup(splitTest(tt.cmd))
			if r.Program != tt.program || strings.Join(r.Path, " ") != tt.path {
				t.Fatalf("program %q path %q, want %q %q (unknown %v)", r.Program, strings.Join(r.Path, " "), tt.program, tt.path, r.Unknown)
			}
			for _, e := range tt.effects {
				if !r.Has(e) {
					t.Errorf("effects %v lack %s", r.Effects, e)
				}
			}
			if r.ReadOnly != tt.readOnly {
				t.Errorf("read only %v, want %v (effects %v, unknown %v)", r.ReadOnly, tt.readOnly, r.Effects, r.Unknown)
			}
			var got []string
			for _, tg := range r.Targets {
				got = append(got, string(tg.Kind)+"="+tg.Word)
			}
			for _, w := range tt.targets {
				if !slices.Contains(got, w) {
					t.Errorf("targets %v lack %s", got, w)
				}
			}
			if len(r.Findings) == 0 {
				t.Errorf("no findings")
			}
		})
	}
}

func TestLookupUnknown(t *testing.T) {
	c := mustDefault(t)
	for _, cmd := range []string{"frobnicate --now", "./ls", "/tmp/x/git status", "git frobnicate", "kubectl frobnicate x", "aws ec2 frobnicate", ""} {
		r := c.Lookup(splitTest(cmd))
		if r.ReadOnly || len(r.Unknown) == 0 {
			t.Errorf("%q: read only %v, unknown %v", cmd, r.ReadOnly, r.Unknown)
		}
	}
}

// splitTest splits on spaces, keeping single-quoted words whole; the
// catalogue takes words already split by the shell parser.
func splitTest(s string) []string {
	var out []string
	for s != "" {
		s = strings.TrimLeft(s, " ")
		if s == "" {
			break
		}
		if s[0] == '\'' {
			end := strings.IndexByte(s[1:], '\'') + 1
			out = append(out, s[1:end])
			s = s[end+1:]
			continue
		}
		w, rest, _ := strings.Cut(s, " ")
		out = append(out, strings.Trim(w, "'"))
		s = rest
	}
	return out
}
