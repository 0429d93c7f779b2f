#!/usr/bin/env node
'use strict';
console.log(JSON.stringify({url: process.argv[2] || null}));
