"""Copy the verifier's labelled sources out of fetched repository snapshots into one folder.

Each source is a file at a pinned commit of a public repository (training/DATA.md says why each
one and under which licence). The `fetch` tool brings a repository as a bare git directory under
/work/.mirror/OWNER+NAME/; this script reads each file with `git show COMMIT:PATH`, unzips the
VitaminC archives, and writes MANIFEST.json beside them: repository, commit, path, licence and
SHA-256 of every file, so a rebuild can be checked against this one. Nothing here is committed:
the folder is regenerated.

    python training/gather_sources.py --mirror /work/.mirror --out training/.cache/sources
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import subprocess
import zipfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Source:
    """One file of one repository at one commit, and where it goes in the folder."""

    repo: str
    commit: str
    path: str
    target: str
    licence: str


FRANK_ARTICLES = "5860706bda0641136d10d27ead52c5f6ae79630e"
SUMMAC = "46056e54e3f30a47655d2d2e76150ad428f58224"  # off the default branch: the validation files
BEGIN = "6e65f0d5a1ed1b9574643a7640ff1678d4e979b5"
FAITHDIAL = "25671c6e3aa7d667943b7744a2b91507e7187f83"
ESNLI = "7b585a3f077fdea899780eb0473940522ae44a2e"
VITAMINC = "152c9639f1e33ca295d0776b618c17884088f72f"
CHECK_COVID = "3ae70f8cac4df13a3ce56878e20d8e76790e422d"
CITINT_COPY = "667a81990e0613998e8c3856603487269f21e91d"  # jedick's copy: the original (ScienceNLP-Lab) lacks its corpus file (over 4 MiB)
SUMMEDITS = "0da1dfa62c783218d26208c1796d3a2605bec745"
# billsum and shakespeare are absent from the snapshot (over 4 MiB); samsum's documents are SAMSum's
# dialogues, CC BY-NC-ND 4.0, and podcast's are transcripts of the Spotify Podcast Dataset, released
# for non-commercial research only: neither is used (as ANLI is not).
SUMMEDITS_DOMAINS = ("ectsum", "news", "qmsumm", "sales_call", "sales_email", "scitldr")
CC_BY_SA_WIKI = "Wikipedia's terms, else CC BY-SA 3.0"

SOURCES = [
    Source("megagonlabs/RPT", "cf2bc1b1b4edd0318b84179e732ec476c4e20a6e", f"data/hotpotqa/{name}.jsonl", f"hotpotqa/{name}.jsonl", "CC BY-SA 4.0 (HotpotQA)")
    for name in ("train", "dev", "test")
] + [
    Source("VinACE/san_mrc", "ad976938a09f34e2af9390a23243470fa208add9", "dev-v1.1.json", "squad2/dev-part.json", "CC BY-SA 4.0 (SQuAD)"),
    Source("ryokamoi/wice", "ddeb6c183665e2a20c5f03c5aa07f03888b9870f", "data/non_supported_tokens/train.jsonl", "wice/non_supported_tokens_train.jsonl",
           "ODC-BY annotations; Wikipedia CC BY-SA"),
    Source("TalSchuster/talschuster.github.io", VITAMINC, "static/vitaminc_real.zip", "vitaminc_real.zip", CC_BY_SA_WIKI),
    Source("TalSchuster/talschuster.github.io", VITAMINC, "static/vitaminc_synthetic.zip", "vitaminc_synthetic.zip", CC_BY_SA_WIKI),
    Source("TalSchuster/talschuster.github.io", VITAMINC, "static/vitaminc_baselines/fever_symmetric.zip", "fever_symmetric.zip", CC_BY_SA_WIKI),
    Source("TalSchuster/talschuster.github.io", VITAMINC, "static/vitaminc_baselines/fever_adversarial.zip", "fever_adversarial.zip", CC_BY_SA_WIKI),
    Source("artidoro/frank", "80a88fb12cc0bfc17ff6ee2c5ebb0c4f4dd8a5f4", "data/human_annotations.json", "frank/human_annotations.json", "MIT"),
    Source("google-research-datasets/xsum_hallucination_annotations", "4abdbb2c807cb93c1df1188a1992d20a55cdcc34", "factuality_annotations_xsum_summaries.csv",
           "xsumfaith/factuality_annotations_xsum_summaries.csv", "CC BY 4.0"),
    *(Source("tingofurro/summac", SUMMAC, f"data/{name}.json", f"summac/{name}.json", f"Apache-2.0 (repository); {note}")
      for name, note in (("factcc", "FactCC BSD-3-Clause"), ("summeval", "SummEval MIT"), ("xsumfaith", "XSumFaith CC BY 4.0"), ("polytope", "Polytope: none stated"))),
    Source("google/BEGIN-dataset", BEGIN, "wow/begin_dev_wow.tsv", "begin/wow_dev.tsv", "CC BY 4.0 (BEGIN and Wizard of Wikipedia)"),
    Source("google/BEGIN-dataset", BEGIN, "wow/begin_test_wow.tsv", "begin/wow_test.tsv", "CC BY 4.0 (BEGIN and Wizard of Wikipedia)"),
    Source("google/BEGIN-dataset", BEGIN, "cmu-dog/begin_dev_cmu.tsv", "begin/cmu_dev.tsv", "CC BY 4.0 (BEGIN); CMU-DoG under festvox's permissive COPYING"),
    Source("google/BEGIN-dataset", BEGIN, "topicalchat/begin_dev_tc.tsv", "begin/tc_dev.tsv", "CC BY 4.0 (BEGIN); Topical-Chat CDLA-Sharing-1.0"),
    Source("emorynlp/selqa", "fef3d6ac6944e2d4237165d90e5f859c71676bdd", "ass/selqa-ass-dev.json", "selqa/dev.json", "Apache-2.0"),
    Source("emorynlp/selqa", "fef3d6ac6944e2d4237165d90e5f859c71676bdd", "ass/selqa-ass-test.json", "selqa/test.json", "Apache-2.0"),
    *(Source("OanaMariaCamburu/e-SNLI", ESNLI, f"dataset/eSNLI/{part}.{split}", f"esnli/{part}.{split}", "SNLI CC BY-SA 4.0; repository MIT")
      for part in ("s1", "s2", "labels") for split in ("dev", "test")),
    # Claims against long documents (claim_documents.py).
    *(Source("posuer/Check-COVID", CHECK_COVID, f"Check-COVID/{split}/covidCheck_{split}_{kind}.json", f"checkcovid/{split}_{kind}.json", "MIT (LICENSE)")
      for split in ("train", "dev", "test") for kind in ("composed", "extracted")),
    Source("posuer/Check-COVID", CHECK_COVID, "Check-COVID/corpus.json", "checkcovid/corpus.json", "MIT (LICENSE)"),
    # Never data/scifact/ of this copy: SciFact is evaluation only (shared/data).
    *(Source("jedick/MLE-capstone-project", CITINT_COPY, f"data/citint/{name}.jsonl", f"citint/{name}.jsonl",
             "MIT (the copy's LICENSE); Citation-Integrity's own repository (ScienceNLP-Lab) MIT")
      for name in ("claims_train", "claims_dev", "claims_test", "corpus")),
    *(Source("salesforce/factualNLG", SUMMEDITS, f"data/summedits/summedits_{name}.json", f"summedits/{name}.json", "Apache-2.0 (LICENSE.txt)")
      for name in SUMMEDITS_DOMAINS),
    Source("yuxiaw/Factcheck-GPT", "a9e6a04a953ad880806529c504a679dd1ad06528", "subtasks/subtask3_claim_evidence_stance.jsonl", "factcheck_gpt/claim_evidence_stance.jsonl",
           "Apache-2.0 (LICENSE; the README's badge calls it the code licence)"),
    # QAGS: read only to drop its articles from every training source (evaluation rows).
    *(Source("W4ngatang/qags", "47798e9b63344e2d3fb4df2def6edc18e9402d30", f"data/mturk_{name}.jsonl", f"qags/mturk_{name}.jsonl", "none stated (evaluation only)")
      for name in ("cnndm", "xsum")),
]
FAITHDIAL_FOLDER = "data-audit"  # every CSV under it: the audited responses, MIT


def git_dir(mirror: Path, repo: str) -> Path:
    folder = mirror / repo.replace("/", "+") / "repo"
    return folder / ".git" if (folder / ".git").is_dir() else folder


def show(mirror: Path, repo: str, commit: str, path: str) -> bytes:
    return subprocess.run(["git", "--git-dir", str(git_dir(mirror, repo)), "show", f"{commit}:{path}"], check=True, capture_output=True).stdout


def listing(mirror: Path, repo: str, commit: str, folder: str) -> list[str]:
    out = subprocess.run(["git", "--git-dir", str(git_dir(mirror, repo)), "ls-tree", "-r", "--name-only", commit, folder], check=True, capture_output=True, text=True)
    return [line for line in out.stdout.splitlines() if line.strip()]


def frank_articles(mirror: Path) -> list[Source]:
    """FRANK's 500 article files (each holds the article and every system's summary)."""
    return [Source("artidoro/frank", FRANK_ARTICLES, path, f"frank/articles/{Path(path).name}", "MIT (FRANK); articles from CNN/DM and XSum (BBC)")
            for path in listing(mirror, "artidoro/frank", FRANK_ARTICLES, "data/articles-wbertscore-json") if path.endswith(".json")]


def faithdial(mirror: Path) -> list[Source]:
    return [Source("McGill-NLP/FaithDial", FAITHDIAL, path, f"faithdial/{path[len(FAITHDIAL_FOLDER) + 1:].replace('/', '_')}", "MIT")
            for path in listing(mirror, "McGill-NLP/FaithDial", FAITHDIAL, FAITHDIAL_FOLDER) if path.endswith(".csv")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mirror", type=Path, default=Path("/work/.mirror"), help="where fetch put the repositories")
    parser.add_argument("--out", type=Path, default=ROOT / "training" / ".cache" / "sources")
    args = parser.parse_args()
    manifest = []
    for source in [*SOURCES, *frank_articles(args.mirror), *faithdial(args.mirror)]:
        data = show(args.mirror, source.repo, source.commit, source.path)
        target = args.out / source.target
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.target.endswith(".zip"):
            folder = args.out / source.target[: -len(".zip")]
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                for member in archive.namelist():
                    if member.endswith(".jsonl"):
                        (folder / Path(member).name).parent.mkdir(parents=True, exist_ok=True)
                        (folder / Path(member).name).write_bytes(archive.read(member))
        else:
            target.write_bytes(data)
        manifest.append({"repo": source.repo, "commit": source.commit, "path": source.path, "target": source.target,
                         "licence": source.licence, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
    (args.out / "MANIFEST.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"{len(manifest)} files -> {args.out}")


if __name__ == "__main__":
    main()
