"""The code host's built-in project templates ("Create from template" on `/projects/new`).

Owns the templates a new project can start from (GitLab's names and keys: `rails`, `spring`, `express`, ...) and
writing one into a new project: every file in a single commit titled "Initialized from '<title>' project template",
as GitLab titles it. The files are short skeletons of our own, enough to show each stack's layout.
"""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from agentenv_webarena.sites.gitlab.model import commit_sha, site_now

__all__ = ["ProjectTemplate", "PROJECT_TEMPLATES", "commit_template"]


@dataclass(frozen=True)
class ProjectTemplate:
    """A built-in template: its key (`template_name`), title, one-line description and files (path -> text)."""

    key: str
    title: str
    description: str
    files: dict[str, str]


def _readme(title: str, run: str) -> str:
    return f"# {title} project\n\nA new project started from the {title} template.\n\n## Run it\n\n    {run}\n"


PROJECT_TEMPLATES: dict[str, ProjectTemplate] = {t.key: t for t in (
    ProjectTemplate("rails", "Ruby on Rails", "Includes an MVC structure, Gemfile, Rakefile, along with many others.", {
        "README.md": _readme("Ruby on Rails", "bin/rails server"),
        "Gemfile": 'source "https://rubygems.org"\n\ngem "rails", "~> 7.0"\ngem "puma"\n',
        "Rakefile": 'require_relative "config/application"\n\nRails.application.load_tasks\n',
        "app/controllers/application_controller.rb": "class ApplicationController < ActionController::Base\nend\n",
        "config/routes.rb": 'Rails.application.routes.draw do\n  root "welcome#index"\nend\n'}),
    ProjectTemplate("spring", "Spring", "Includes an MVC structure, mvnw and pom.xml to help you get started.", {
        "README.md": _readme("Spring", "./mvnw spring-boot:run"),
        "pom.xml": "<project>\n  <groupId>com.example</groupId>\n  <artifactId>demo</artifactId>\n</project>\n",
        "mvnw": "#!/bin/sh\nexec mvn \"$@\"\n",
        "src/main/java/com/example/demo/DemoApplication.java":
            "package com.example.demo;\n\npublic class DemoApplication {\n}\n"}),
    ProjectTemplate("express", "NodeJS Express", "Includes an MVC structure to help you get started.", {
        "README.md": _readme("NodeJS Express", "npm start"),
        "package.json": '{\n  "name": "express-app",\n  "scripts": {"start": "node ./bin/www"},\n'
                        '  "dependencies": {"express": "^4.18.0"}\n}\n',
        "app.js": "const express = require('express');\nconst app = express();\nmodule.exports = app;\n",
        "bin/www": "#!/usr/bin/env node\nrequire('../app').listen(3000);\n"}),
    ProjectTemplate("iosswift", "iOS (Swift)", "A ready-to-go template for use with iOS Swift apps.", {
        "README.md": _readme("iOS (Swift)", "open the project in Xcode"),
        "App/AppDelegate.swift": "import UIKit\n\n@main\nclass AppDelegate: UIResponder, UIApplicationDelegate {}\n"}),
    ProjectTemplate("dotnetcore", ".NET Core", "A .NET Core console application template, customizable for any "
                    ".NET Core project.", {
        "README.md": _readme(".NET Core", "dotnet run"),
        "Program.cs": 'System.Console.WriteLine("Hello World!");\n',
        "dotnetcore.csproj": '<Project Sdk="Microsoft.NET.Sdk">\n</Project>\n'}),
    ProjectTemplate("android", "Android", "A ready-to-go template for use with Android apps.", {
        "README.md": _readme("Android", "./gradlew assembleDebug"),
        "build.gradle": "plugins {\n    id 'com.android.application'\n}\n",
        "app/src/main/AndroidManifest.xml": '<manifest package="com.example.app" />\n'}),
    ProjectTemplate("plainhtml", "Pages/Plain HTML", "Everything you need to create a GitLab Pages site using plain "
                    "HTML.", {
        "README.md": _readme("Pages/Plain HTML", "open public/index.html"),
        "public/index.html": "<!DOCTYPE html>\n<html><body><h1>Hello from Pages</h1></body></html>\n",
        ".gitlab-ci.yml": "pages:\n  script:\n    - echo 'nothing to build'\n  artifacts:\n    paths:\n"
                          "      - public\n"}),
    ProjectTemplate("jekyll", "Pages/Jekyll", "Everything you need to create a GitLab Pages site using Jekyll.", {
        "README.md": _readme("Pages/Jekyll", "bundle exec jekyll serve"),
        "_config.yml": "title: My Jekyll site\n",
        "index.md": "---\nlayout: home\n---\n",
        "Gemfile": 'source "https://rubygems.org"\n\ngem "jekyll"\n'}),
)}


def commit_template(conn: sqlite3.Connection, project_id: int, branch: str, template: ProjectTemplate,
                    author_id: int) -> int:
    """Write every file of `template` on `branch` in one commit; returns the commit id."""
    now = site_now(conn)
    title = f"Initialized from '{template.title}' project template"
    cid = conn.execute("INSERT INTO gitlab_commits (project_id, branch, sha, title, author_id, created_at) "
                       "VALUES (?,?,?,?,?,?)", (project_id, branch, commit_sha(project_id, 1000, title), title,
                                                author_id, now)).lastrowid
    conn.executemany("INSERT OR REPLACE INTO gitlab_files (project_id, branch, path, content, commit_id) "
                     "VALUES (?,?,?,?,?)", [(project_id, branch, path, text, cid)
                                            for path, text in sorted(template.files.items())])
    conn.execute("UPDATE gitlab_projects SET last_activity_at = ? WHERE id = ?", (now, project_id))
    return cid
