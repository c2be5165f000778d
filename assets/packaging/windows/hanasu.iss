; Inno Setup 6 script for the Windows installer of Hanasu.
;
; Build the bundle first (on Windows, in the project's venv):
;     pip install -e . pillow          (Pillow turns assets\icons\hanasu.png into the .exe icon)
;     pyinstaller --noconfirm build.spec
;     dist\hanasu\hanasu-cli.exe --self-test
; then, from the repository root:
;     iscc /DAppVersion=0.1.0 assets\packaging\windows\hanasu.iss
; The installer lands in dist\hanasu-<version>-setup.exe.
;
; dist\hanasu holds hanasu.exe (windowed, the desktop app) and hanasu-cli.exe (console: self-test,
; `run`, `models download`); both share the _internal folder. Downloaded models go to the user's
; data folder (%LOCALAPPDATA%\hanasu), never into Program Files, so no admin rights are needed
; to add models and uninstalling keeps them.

#ifndef AppVersion
  #define AppVersion "0.1.0"
#endif
#define AppName "Hanasu"
#define SourceDir "..\..\..\dist\hanasu"

[Setup]
AppId={{6F1A2E7C-5B9D-4C3E-9A41-2D8E7B3C5A10}
AppName={#AppName}
AppVersion={#AppVersion}
AppVerName={#AppName} {#AppVersion}
AppPublisher=Hanasu
DefaultDirName={autopf}\{#AppName}
DefaultGroupName={#AppName}
DisableProgramGroupPage=yes
; Per-user install by default (no UAC prompt); the dialog offers "install for all users".
PrivilegesRequired=lowest
PrivilegesRequiredOverridesAllowed=dialog
ArchitecturesAllowed=x64compatible
ArchitecturesInstallIn64BitMode=x64compatible
OutputDir=..\..\..\dist
OutputBaseFilename=hanasu-{#AppVersion}-setup
; The bundle carries ~230 MB of embedded models that barely compress: lzma2 at "fast" keeps the
; build quick with almost the same size as "ultra".
Compression=lzma2/fast
SolidCompression=no
WizardStyle=modern
UninstallDisplayIcon={app}\hanasu.exe
UninstallDisplayName={#AppName}
; SetupIconFile needs an .ico: PyInstaller writes one for the .exe under build\hanasu\; copy it to
; assets\packaging\windows\hanasu.ico and uncomment the next line to brand the installer too.
; SetupIconFile=hanasu.ico

[Languages]
Name: "english"; MessagesFile: "compiler:Default.isl"

[Tasks]
Name: "desktopicon"; Description: "{cm:CreateDesktopIcon}"; GroupDescription: "{cm:AdditionalIcons}"; Flags: unchecked

[Files]
Source: "{#SourceDir}\*"; DestDir: "{app}"; Flags: ignoreversion recursesubdirs createallsubdirs

[Icons]
Name: "{autoprograms}\{#AppName}"; Filename: "{app}\hanasu.exe"; Comment: "Talk with your local voice companion"
Name: "{autodesktop}\{#AppName}"; Filename: "{app}\hanasu.exe"; Tasks: desktopicon

[Run]
Filename: "{app}\hanasu.exe"; Description: "{cm:LaunchProgram,{#AppName}}"; Flags: nowait postinstall skipifsilent

[UninstallDelete]
; Python caches the bundle may write next to itself; user data in %LOCALAPPDATA%\hanasu stays.
Type: filesandordirs; Name: "{app}\_internal\__pycache__"
