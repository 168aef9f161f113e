"""The playground's static files (index.html, playground.js, playground.css), shipped as package data."""
