// The syncguard build the tests that run the real binary use.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const REPO = path.join(__dirname, '..', '..', '..');

/** The syncguard build of this checkout, if any (`SYNCGUARD` names another). */
function syncguardBinary() {
    const candidates = [
        process.env.SYNCGUARD,
        path.join(REPO, 'target', 'release', 'syncguard'),
        path.join(REPO, 'target', 'debug', 'syncguard'),
    ];
    return candidates.find((file) => file && fs.existsSync(file));
}

module.exports = { REPO, syncguardBinary };
