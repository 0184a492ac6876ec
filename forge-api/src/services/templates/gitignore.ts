/**
 * .gitignore templates under the names Gitea (and GitHub) use for them. No npm package ships
 * GitHub's collection, so this is a small curated set of our own covering the common stacks;
 * names are case-sensitive like Gitea's file names.
 */
const GITIGNORES: Record<string, string> = {
  C: `# Object files and libraries
*.o
*.ko
*.obj
*.elf
*.a
*.lib
*.so
*.so.*
*.dylib
*.dll

# Precompiled headers and debug files
*.gch
*.pch
*.dSYM/
*.su
*.idb
*.pdb

# Executables
*.exe
*.out
*.app

# Kernel module build output
*.mod*
*.cmd
.tmp_versions/
modules.order
Module.symvers
`,
  'C++': `# Object files and libraries
*.o
*.obj
*.slo
*.lo
*.a
*.la
*.lai
*.lib
*.so
*.dylib
*.dll

# Precompiled headers
*.gch
*.pch

# Fortran module files
*.mod
*.smod

# Executables
*.exe
*.out
*.app

# Build folders
build/
cmake-build-*/
CMakeFiles/
CMakeCache.txt
`,
  Go: `# Binaries
*.exe
*.exe~
*.dll
*.so
*.dylib

# Test binaries and coverage output
*.test
*.out
coverage.*

# Workspace file
go.work
go.work.sum

# Vendored dependencies (uncomment if not committed)
# vendor/

# Environment files
.env
`,
  Java: `# Compiled classes and logs
*.class
*.log

# Packages
*.jar
*.war
*.nar
*.ear
*.zip
*.tar.gz
*.rar

# JVM crash logs
hs_err_pid*
replay_pid*

# Build tools
target/
build/
.gradle/
out/
`,
  Kotlin: `# Compiled classes and logs
*.class
*.log

# Packages
*.jar
*.war
*.ear

# JVM crash logs
hs_err_pid*

# Gradle and build output
.gradle/
build/
.kotlin/
`,
  Node: `# Logs
logs
*.log
npm-debug.log*
yarn-debug.log*
yarn-error.log*
pnpm-debug.log*

# Runtime data
pids
*.pid
*.seed

# Coverage
coverage/
.nyc_output/

# Dependencies
node_modules/
jspm_packages/

# Caches
.npm
.eslintcache
.cache/
.parcel-cache/
*.tsbuildinfo

# Build output
dist/
.next/
out/

# Environment
.env
.env.*
!.env.example
`,
  Python: `# Byte-compiled files
__pycache__/
*.py[cod]
*$py.class

# C extensions
*.so

# Packaging
build/
dist/
*.egg-info/
*.egg
.eggs/
wheels/

# Virtual environments
.venv/
venv/
env/

# Tests and coverage
.pytest_cache/
.tox/
.nox/
.coverage
.coverage.*
htmlcov/

# Type checkers and linters
.mypy_cache/
.ruff_cache/

# Jupyter
.ipynb_checkpoints

# Environment
.env
`,
  Ruby: `*.gem
*.rbc
/.config
/coverage/
/pkg/
/spec/reports/
/test/tmp/
/tmp/
.bundle/
vendor/bundle
.byebug_history
.env
`,
  Rust: `# Build output
debug/
target/

# Backup files from rustfmt
**/*.rs.bk

# Debug information from MSVC
*.pdb
`,
  Swift: `# Xcode
xcuserdata/
DerivedData/
*.xcscmblueprint
*.xccheckout

# Swift Package Manager
.build/
.swiftpm/
Packages/

# Build products
build/
*.ipa
*.dSYM.zip
*.dSYM
`,
  Dotnet: `# Build results
[Dd]ebug/
[Rr]elease/
x64/
x86/
[Bb]in/
[Oo]bj/
[Ll]og/

# User-specific files
*.user
*.suo
*.userprefs

# NuGet
*.nupkg
**/packages/*

# Test results
[Tt]est[Rr]esult*/
*.trx
`,
  Terraform: `# Local state and plugin folders
**/.terraform/*
*.tfstate
*.tfstate.*

# Crash logs
crash.log
crash.*.log

# Variable files that may hold secrets
*.tfvars
*.tfvars.json

# Local overrides
override.tf
override.tf.json
*_override.tf
*_override.tf.json

# CLI configuration
.terraformrc
terraform.rc
`,
  JetBrains: `# IDE settings of IntelliJ-based editors
.idea/
*.iml
*.ipr
*.iws
out/
`,
  VisualStudioCode: `.vscode/*
!.vscode/settings.json
!.vscode/tasks.json
!.vscode/launch.json
!.vscode/extensions.json
*.code-workspace
.history/
`,
  Vim: `# Swap and undo files
[._]*.s[a-v][a-z]
[._]*.sw[a-p]
[._]s[a-rt-v][a-z]
[._]ss[a-gi-z]
[._]sw[a-p]
*.un~
Session.vim
Sessionx.vim
.netrwhist
*~
tags
`,
  Emacs: `*~
\\#*\\#
/.emacs.desktop
/.emacs.desktop.lock
*.elc
auto-save-list
tramp
.\\#*
.projectile
.dir-locals.el
`,
  Linux: `*~

# Temporary files left by fuse
.fuse_hidden*

# Directory settings of KDE
.directory

# Trash folders
.Trash-*

# NFS leftovers
.nfs*
`,
  macOS: `# Finder metadata
.DS_Store
.AppleDouble
.LSOverride
Icon\r

# Resource forks
._*

# Volume root files
.DocumentRevisions-V100
.fseventsd
.Spotlight-V100
.TemporaryItems
.Trashes
.VolumeIcon.icns
`,
  Windows: `# Thumbnail caches
Thumbs.db
Thumbs.db:encryptable
ehthumbs.db
ehthumbs_vista.db

# Folder settings
[Dd]esktop.ini

# Recycle Bin
$RECYCLE.BIN/

# Installer and shortcut files
*.cab
*.msi
*.msix
*.msm
*.msp
*.lnk
`,
};

/** Names sorted case-insensitively, as Gitea lists its files. */
export function gitignoreNames(): string[] {
  return Object.keys(GITIGNORES).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
}

/** Template text, or null for an unknown name. */
export function gitignoreText(name: string): string | null {
  return Object.prototype.hasOwnProperty.call(GITIGNORES, name) ? GITIGNORES[name] : null;
}
